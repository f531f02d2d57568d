"""engine.onnx_export.single_text_graph on a two-layer graph built by hand (no model needed).

The graph is attention's mask arithmetic in miniature: scores plus the additive mask
(1 - mask) * -10000 into a Softmax, whose output times ln 3 plus the same mask into a second Softmax.
"""

from __future__ import annotations

import math

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from numpy.typing import NDArray
from onnx import TensorProto, helper

from engine.onnx_export import single_text_graph

LN3 = math.log(3.0)


def _graph(*, second_mask: bool = True, mask_output: bool = False) -> bytes:
    nodes = [
        helper.make_node("Cast", ["attention_mask"], ["m"], to=TensorProto.FLOAT),
        helper.make_node("Sub", ["one", "m"], ["inv"]),
        helper.make_node("Mul", ["inv", "neg"], ["ext"]),
        helper.make_node("Add", ["scores", "ext"], ["masked1"]),
        helper.make_node("Softmax", ["masked1"], ["probs1"], axis=-1),
        helper.make_node("Mul", ["probs1", "ln3"], ["scores2"]),
    ]
    if second_mask:
        nodes.append(helper.make_node("Add", ["scores2", "ext"], ["masked2"]))
    nodes.append(
        helper.make_node("Softmax", ["masked2" if second_mask else "scores2"], ["probs2"], axis=-1)
    )
    outputs = [helper.make_tensor_value_info("probs2", TensorProto.FLOAT, [1, 2])]
    if mask_output:
        outputs.append(helper.make_tensor_value_info("ext", TensorProto.FLOAT, [1, 2]))
    graph = helper.make_graph(
        nodes,
        "mask",
        [
            helper.make_tensor_value_info("scores", TensorProto.FLOAT, [1, 2]),
            helper.make_tensor_value_info("attention_mask", TensorProto.INT64, [1, 2]),
        ],
        outputs,
        initializer=[
            helper.make_tensor("one", TensorProto.FLOAT, [], [1.0]),
            helper.make_tensor("neg", TensorProto.FLOAT, [], [-10000.0]),
            helper.make_tensor("ln3", TensorProto.FLOAT, [], [LN3]),
        ],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return bytes(model.SerializeToString())


def _run(model: bytes, mask: list[int]) -> NDArray[np.float32]:
    session = ort.InferenceSession(model, providers=["CPUExecutionProvider"])
    feeds = {
        "scores": np.array([[0.0, LN3]], dtype=np.float32),
        "attention_mask": np.array([mask], dtype=np.int64),
    }
    return np.asarray(session.run(["probs2"], feeds)[0])


def test_the_single_text_graph_drops_the_mask_and_gives_the_same_outputs_for_an_unpadded_text() -> (
    None
):
    whole = _graph()

    single = single_text_graph(whole)

    # By hand: softmax(0, ln 3) = (1/4, 3/4); times ln 3, the gap is ln 3 / 2, so the second Softmax
    # gives (1, sqrt 3) / (1 + sqrt 3) = (0.366025, 0.633975).
    expected = np.array([[1 / (1 + math.sqrt(3)), math.sqrt(3) / (1 + math.sqrt(3))]])
    unpadded = _run(whole, [1, 1])
    assert np.allclose(unpadded, expected, atol=1e-6)
    assert np.array_equal(_run(single, [1, 1]), unpadded)  # bit for bit
    # Control: the whole graph obeys a padding mask (the second token gets 0 in both layers); the
    # single-text graph no longer reads the mask at all.
    assert np.allclose(_run(whole, [1, 0]), [[1.0, 0.0]], atol=1e-6)
    assert np.array_equal(_run(single, [1, 0]), unpadded)
    ops = [node.op_type for node in onnx.load_from_string(single).graph.node]
    assert ops == ["Softmax", "Mul", "Softmax"]
    inputs = [i.name for i in onnx.load_from_string(single).graph.input]
    assert inputs == ["scores", "attention_mask"]  # fed as the whole graph is


def test_the_single_text_graph_is_the_same_bytes_every_time() -> None:
    whole = _graph()

    assert single_text_graph(whole) == single_text_graph(whole)
    assert single_text_graph(whole) != whole


def test_a_graph_of_another_shape_is_refused_with_what_was_found() -> None:
    with pytest.raises(ValueError, match="1 of 2 do"):
        single_text_graph(_graph(second_mask=False))
    with pytest.raises(ValueError, match="the attention mask still feeds the graph"):
        single_text_graph(_graph(mask_output=True))
    single_text_graph(_graph())  # control: the expected shape passes
