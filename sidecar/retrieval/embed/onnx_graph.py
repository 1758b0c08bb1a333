"""One exact rewrite of the int8 MiniLM graph: look embedding rows up before dequantising them.

The model stores every weight as int8 plus a float scale, dequantised in the graph by
``Cast(int8 -> float) * scale``. onnxruntime folds those constants at load, so the 30522 x 384
word-embedding table becomes a 47 MB float32 tensor although a query only reads a few of its rows.
``gather_before_dequantize`` turns ``Gather(Cast(table) * row_scale, ids)`` into
``Cast(Gather(table, ids)) * Gather(row_scale, ids)``: the same multiplications on the same
values, so the outputs are bit for bit those of the original graph, while the table stays int8
(12 MB). The linear layers are left as they are: their folded float32 weights feed the fast
float32 kernels (dequantising them per run costs ~10x the query latency).

onnxruntime has no Python API for editing a graph, and the ``onnx`` package would be a ~16 MB
dependency for this alone, so the rewrite works on the protobuf wire format directly; it touches
only ``ModelProto.graph.node`` and copies every other field byte for byte.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field

__all__ = ["GraphFormatError", "gather_before_dequantize"]

# Field numbers from onnx.proto (stable since IR version 3).
_MODEL_GRAPH = 7
_GRAPH_NODE, _GRAPH_INITIALIZER = 1, 5
_NODE_INPUT, _NODE_OUTPUT, _NODE_NAME, _NODE_OP_TYPE, _NODE_ATTRIBUTE, _NODE_DOMAIN = 1, 2, 3, 4, 5, 7
_ATTR_NAME, _ATTR_I, _ATTR_TYPE = 1, 3, 20
_ATTR_TYPE_INT = 2
_TENSOR_DIMS, _TENSOR_DATA_TYPE, _TENSOR_NAME = 1, 2, 8
_FLOAT, _INT8 = 1, 3
_VARINT, _I64, _LEN, _I32 = 0, 1, 2, 5

#: Slices of the model are memoryviews: a 23 MB model is walked without copying its tensors.
Buf = bytes | memoryview


class GraphFormatError(ValueError):
    """The bytes are not a protobuf message of the expected shape."""


def _varint(data: Buf, pos: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        if pos >= len(data):
            raise GraphFormatError("truncated varint")
        byte = data[pos]
        pos += 1
        value |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return value, pos
        shift += 7
        if shift > 63:
            raise GraphFormatError("varint too long")


def _fields(data: Buf) -> Iterator[tuple[int, int, int | Buf, Buf]]:
    """Each field of a message: (number, wire type, value, the field's raw bytes)."""
    data = memoryview(data)
    pos = 0
    while pos < len(data):
        start = pos
        key, pos = _varint(data, pos)
        number, wire = key >> 3, key & 7
        value: int | Buf
        if wire == _VARINT:
            value, pos = _varint(data, pos)
        elif wire == _LEN:
            size, pos = _varint(data, pos)
            if pos + size > len(data):
                raise GraphFormatError("truncated field")
            value, pos = data[pos : pos + size], pos + size
        elif wire in (_I64, _I32):
            width = 8 if wire == _I64 else 4
            value, pos = data[pos : pos + width], pos + width
        else:
            raise GraphFormatError(f"unsupported wire type {wire}")
        yield number, wire, value, data[start:pos]


def _encode_varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _len_field(number: int, payload: Buf) -> bytes:
    return b"".join((_encode_varint(number << 3 | _LEN), _encode_varint(len(payload)), payload))


def _int_field(number: int, value: int) -> bytes:
    return _encode_varint(number << 3 | _VARINT) + _encode_varint(value)


@dataclass
class _Node:
    raw: Buf
    op_type: str = ""
    domain: str = ""
    inputs: list[str] = field(default_factory=list)
    outputs: list[str] = field(default_factory=list)
    ints: dict[str, int] = field(default_factory=dict)  # integer attributes

    @classmethod
    def parse(cls, raw: Buf) -> _Node:
        node = cls(raw)
        for number, wire, value, _ in _fields(raw):
            if wire != _LEN or not isinstance(value, memoryview):
                continue
            if number == _NODE_INPUT:
                node.inputs.append(value.tobytes().decode())
            elif number == _NODE_OUTPUT:
                node.outputs.append(value.tobytes().decode())
            elif number == _NODE_OP_TYPE:
                node.op_type = value.tobytes().decode()
            elif number == _NODE_DOMAIN:
                node.domain = value.tobytes().decode()
            elif number == _NODE_ATTRIBUTE:
                name, ivalue = "", None
                for anum, _, avalue, _ in _fields(value):
                    if anum == _ATTR_NAME and isinstance(avalue, memoryview):
                        name = avalue.tobytes().decode()
                    elif anum == _ATTR_I and isinstance(avalue, int):
                        ivalue = avalue
                if ivalue is not None:
                    node.ints[name] = ivalue
        return node


def _node(op_type: str, inputs: list[str], output: str, **ints: int) -> bytes:
    parts = [_len_field(_NODE_INPUT, name.encode()) for name in inputs]
    parts.append(_len_field(_NODE_OUTPUT, output.encode()))
    parts.append(_len_field(_NODE_NAME, f"{output}/{op_type}".encode()))
    parts.append(_len_field(_NODE_OP_TYPE, op_type.encode()))
    for name, value in ints.items():
        attr = (
            _len_field(_ATTR_NAME, name.encode()) + _int_field(_ATTR_I, value) + _int_field(_ATTR_TYPE, _ATTR_TYPE_INT)
        )
        parts.append(_len_field(_NODE_ATTRIBUTE, attr))
    return b"".join(parts)


def _initializers(graph: Buf) -> dict[str, tuple[int, list[int]]]:
    """Initializer name -> (data type, dims)."""
    out: dict[str, tuple[int, list[int]]] = {}
    for number, _, value, _ in _fields(graph):
        if number != _GRAPH_INITIALIZER or not isinstance(value, memoryview):
            continue
        name, dtype, dims = "", 0, []
        for tnum, twire, tvalue, _ in _fields(value):
            if tnum == _TENSOR_NAME and isinstance(tvalue, memoryview):
                name = tvalue.tobytes().decode()
            elif tnum == _TENSOR_DATA_TYPE and isinstance(tvalue, int):
                dtype = tvalue
            elif tnum == _TENSOR_DIMS and isinstance(tvalue, int):
                dims.append(tvalue)
            elif tnum == _TENSOR_DIMS and twire == _LEN and isinstance(tvalue, memoryview):  # packed
                pos = 0
                while pos < len(tvalue):
                    dim, pos = _varint(tvalue, pos)
                    dims.append(dim)
        out[name] = (dtype, dims)
    return out


def _rewrite_graph(graph: Buf) -> tuple[list[Buf], int]:
    """The rewritten graph's fields (raw, in order) and how many tables were rewritten."""
    inits = _initializers(graph)
    nodes = [
        _Node.parse(value)
        for number, _, value, _ in _fields(graph)
        if number == _GRAPH_NODE and isinstance(value, memoryview)
    ]
    producer = {out: n for n in nodes for out in n.outputs}
    consumers: dict[str, int] = {}
    for n in nodes:
        for name in n.inputs:
            consumers[name] = consumers.get(name, 0) + 1
    replace: dict[int, list[bytes]] = {}
    drop: set[int] = set()
    for gather in nodes:
        if gather.op_type != "Gather" or gather.domain or gather.ints.get("axis", 0) != 0 or len(gather.inputs) != 2:
            continue
        mul = producer.get(gather.inputs[0])
        if mul is None or mul.op_type != "Mul" or mul.domain or consumers.get(mul.outputs[0]) != 1:
            continue
        casts = [producer[i] for i in mul.inputs if i in producer and producer[i].op_type == "Cast"]
        if len(casts) != 1 or casts[0].domain or casts[0].ints.get("to") != _FLOAT:
            continue
        cast = casts[0]
        table = cast.inputs[0]
        scale = next((i for i in mul.inputs if i != cast.outputs[0]), "")
        table_type, table_dims = inits.get(table, (0, []))
        scale_type, scale_dims = inits.get(scale, (0, []))
        if consumers.get(cast.outputs[0]) != 1 or table_type != _INT8 or len(table_dims) != 2 or scale_type != _FLOAT:
            continue
        if scale_dims != [table_dims[0], 1]:  # one scale per row: a row's scale travels with the row
            continue
        ids, out = gather.inputs[1], gather.outputs[0]
        replace[id(gather)] = [
            _node("Gather", [table, ids], f"{out}/q", axis=0),
            _node("Gather", [scale, ids], f"{out}/scale", axis=0),
            _node("Cast", [f"{out}/q"], f"{out}/f", to=_FLOAT),
            _node("Mul", [f"{out}/f", f"{out}/scale"], out),
        ]
        drop.update((id(mul), id(cast)))
    if not replace:
        return [graph], 0
    parts: list[Buf] = []
    node_iter = iter(nodes)
    for number, _, _, raw in _fields(graph):
        if number != _GRAPH_NODE:
            parts.append(raw)
            continue
        node = next(node_iter)
        if id(node) in replace:
            parts.extend(_len_field(_GRAPH_NODE, new) for new in replace[id(node)])
        elif id(node) not in drop:
            parts.append(raw)
    return parts, len(replace)


def gather_before_dequantize(model: bytes) -> tuple[bytes, int]:
    """The model with every int8 row-scaled lookup table gathered before dequantising, and how many
    tables were rewritten (0: the bytes come back unchanged)."""
    parts: list[Buf] = []
    rewritten = 0
    for number, _, value, raw in _fields(model):
        if number == _MODEL_GRAPH and isinstance(value, memoryview):
            graph, rewritten = _rewrite_graph(value)
            size = sum(len(part) for part in graph)
            parts += [_encode_varint(_MODEL_GRAPH << 3 | _LEN), _encode_varint(size), *graph]  # one copy in all
        else:
            parts.append(raw)
    return (b"".join(parts), rewritten) if rewritten else (model, 0)
