"""Retrieval arms behind one interface."""
