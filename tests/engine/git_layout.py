"""Git repositories and worktrees laid out on disk as git writes them (git-worktree(1)), without git.

`repository(path)` makes a main working tree (`path/.git/` a folder); `worktree(main, path, name)` a
linked one: `path/.git` is the file `gitdir: <main>/.git/worktrees/<name>`, whose folder holds
`commondir` (`../..`, as git writes it) and `gitdir` (back to `path/.git`).
"""

from __future__ import annotations

from pathlib import Path


def repository(path: Path) -> Path:
    """A main working tree at `path`; returns its common git directory."""
    git = path / ".git"
    (git / "objects").mkdir(parents=True)
    (git / "HEAD").write_text("ref: refs/heads/main\n", encoding="utf-8")
    return git


def worktree(main: Path, path: Path, name: str, *, relative: bool = False) -> Path:
    """A linked worktree of the repository at `main`, at `path`; returns its git directory.
    `relative` writes the `.git` file's path relative to the worktree (git's
    `worktree.useRelativePaths`)."""
    gitdir = main / ".git" / "worktrees" / name
    gitdir.mkdir(parents=True)
    (gitdir / "commondir").write_text("../..\n", encoding="utf-8")
    (gitdir / "gitdir").write_text(f"{path / '.git'}\n", encoding="utf-8")
    path.mkdir(parents=True, exist_ok=True)
    target = Path("..") / gitdir.relative_to(path.parent) if relative else gitdir
    (path / ".git").write_text(f"gitdir: {target}\n", encoding="utf-8")
    return gitdir
