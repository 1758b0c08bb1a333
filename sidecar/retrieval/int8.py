"""An int8 copy of a tier's vector matrix: a first pass whose bounds make the dense top k exact.

A dense search reads the whole float32 matrix (1.5 kB a row) for one product, and that read is
most of its cost. The copy holds each row as int8 with its own scale (384 bytes a row), multiplied
by onnxruntime's integer kernels. A row's values use seven bits (-63 to 63): onnxruntime's uint8 x
int8 kernels on CPUs without VNNI add pairs of products in saturating 16-bit lanes, and 255 x 127 x 2
overflows one (sums off by thousands) where 255 x 63 x 2 does not. ``build`` raises when the kernel
disagrees with numpy's exact integer product on a probe (the vector index then reads the float32
matrix for good). For every row the copy gives a cosine within a known bound of
the exact one: ``|x.q - x'.q'| <= |x - x'| |q| + |x'| |q - q'|``, where ``x'`` and ``q'`` are the
int8 row and query scaled back, plus ``MARGIN`` for float rounding in both products. A row whose
upper bound is under the k-th best lower bound is beaten by k rows for certain; the rest (a few
hundred to a thousand of 10,000) are scored exactly from the float32 matrix, so the top k and every
cosine returned are the exact search's.

onnxruntime is used only when the process has loaded it (the in-process embedder did): the copy
never imports it. The model is a single ``MatMulInteger`` node written as protobuf bytes
(``onnx`` is not a dependency), the matrix its constant, so onnxruntime packs it once.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np
import numpy.typing as npt

__all__ = ["MARGIN", "Int8Pass", "loaded"]

Floats = npt.NDArray[np.float32]
#: Added to every row's bound: float32 rounding of a 384-term product of unit vectors is under
#: 384 * 2**-24 (2.3e-5), the int8 product's scaling in float64 far less.
MARGIN = 1e-4
_INT8, _UINT8, _INT32 = 3, 2, 6  # onnx TensorProto data types
_ZERO = 128  # the query's zero point: int8 values shifted into uint8
_PEAK = 63  # a row's largest value in the copy (seven bits: no saturating 16-bit sum)


def loaded() -> Any | None:
    """The onnxruntime module when this process has already imported it, else None."""
    return sys.modules.get("onnxruntime")


class Int8Pass:
    """The int8 copy of the first ``rows`` rows of a unit-row matrix, with each row's bound terms."""

    def __init__(self, session: Any, rows: int, scales: npt.NDArray[np.float32], err: npt.NDArray[np.float64]):
        self._session = session
        self.rows = rows
        self._scales = scales.astype(np.float64)  # a row's int8 values times its scale approximate the row
        self._own = err[0] + MARGIN  # |x - x'| of each row, with the rounding margin
        self._norm = err[1]  # |x'| of each row

    @classmethod
    def build(cls, matrix: Floats) -> Int8Pass | None:
        """The copy of ``matrix`` (unit rows), or None without onnxruntime or for no rows."""
        ort = loaded()
        if ort is None or matrix.ndim != 2 or not len(matrix):
            return None
        rows, dim = matrix.shape
        peak = np.abs(matrix).max(axis=1)
        scales = np.where(peak > 0, peak / np.float32(_PEAK), np.float32(1)).astype(np.float32)
        quantized = np.rint(matrix / scales[:, None]).astype(np.int8)
        back = quantized.astype(np.float32) * scales[:, None]  # float32's rounding here is far under MARGIN
        err = np.stack([np.linalg.norm(matrix - back, axis=1), np.linalg.norm(back, axis=1)]).astype(np.float64)
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        options.inter_op_num_threads = 1
        options.add_session_config_entry("session.intra_op.allow_spinning", "0")
        options.enable_cpu_mem_arena = False  # an arena holds ~16 MB for a 40 kB output
        model = _model(np.ascontiguousarray(quantized.T), dim, rows)
        session = ort.InferenceSession(model, options, providers=["CPUExecutionProvider"])
        if not _exact(session, quantized):
            raise ArithmeticError("onnxruntime's integer product differs from the exact one on this CPU")
        return cls(session, rows, scales, err)

    def bounds(self, query: Floats) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.float64]]:
        """Each row's approximate cosine to the unit ``query`` and the bound on its error."""
        peak = float(np.abs(query).max())
        scale = peak / 127.0 if peak > 0 else 1.0
        ints = np.rint(query / scale)
        off = float(np.linalg.norm(query - ints * scale))
        approx = _product(self._session, ints) * (self._scales * scale)
        return approx, self._own + self._norm * off

    def candidates(
        self,
        matrix: Floats,
        query: Floats,
        k: int,
        *,
        held: npt.NDArray[np.intp] | None,
        at: npt.NDArray[np.intp],
        missing: npt.NDArray[np.intp],
    ) -> npt.NDArray[np.intp]:
        """Rows of ``matrix`` that hold the exact top ``k`` by cosine to the unit ``query``: every
        row whose upper bound reaches the k-th best lower bound. Rows ``held`` are this copy's rows
        ``at`` (None: the matrix's rows are the copy's, in order); ``missing`` rows are not in it
        and are scored exactly."""
        approx, err = self.bounds(query)
        n = len(matrix)
        if n <= k:
            return np.arange(n)
        if held is None:
            near, off = approx, err
        else:
            near = np.empty(n, dtype=np.float64)
            off = np.empty(n, dtype=np.float64)
            near[held] = approx[at]
            off[held] = err[at]
            if len(missing):
                near[missing] = matrix[missing] @ query
                off[missing] = MARGIN
        low = near - off
        kth = np.partition(low, n - k)[n - k]
        return np.flatnonzero(near + off >= kth)


def _exact(session: Any, quantized: npt.NDArray[np.int8]) -> bool:
    """Whether the kernel's product equals numpy's exact one on a probe: the query of largest
    values, signed as the first row is (its every product at its peak), over the first rows."""
    ints = np.where(quantized[0] >= 0, 127, -127).astype(np.int64)
    return bool(np.array_equal(_product(session, ints)[:256], quantized[:256].astype(np.int64) @ ints))


def _product(session: Any, ints: npt.NDArray[Any]) -> npt.NDArray[np.int32]:
    """The copy's integer product with a query's int8 values (-127 to 127), shifted into uint8."""
    products: npt.NDArray[np.int32] = session.run(None, {"a": (ints + _ZERO).astype(np.uint8)[None, :]})[0][0]
    return products


def _model(weights: npt.NDArray[np.int8], dim: int, rows: int) -> bytes:
    """A ModelProto: ``y = MatMulInteger(a, b, 128)`` with ``b`` (dim x rows, int8) a constant."""
    b = _int(1, dim) + _int(1, rows) + _int(2, _INT8) + _str(8, "b") + _bytes(9, weights.tobytes())
    zero = _int(2, _UINT8) + _str(8, "zero") + _bytes(9, bytes([_ZERO]))
    node = _str(1, "a") + _str(1, "b") + _str(1, "zero") + _str(2, "y") + _str(4, "MatMulInteger")
    graph = (
        _bytes(1, node)
        + _str(2, "int8_pass")
        + _bytes(5, b)
        + _bytes(5, zero)
        + _bytes(11, _value("a", _UINT8, (1, dim)))
        + _bytes(12, _value("y", _INT32, (1, rows)))
    )
    opset = _str(1, "") + _int(2, 13)
    return _int(1, 8) + _bytes(8, opset) + _bytes(7, graph)


def _value(name: str, kind: int, dims: tuple[int, ...]) -> bytes:
    shape = b"".join(_bytes(1, _int(1, d)) for d in dims)
    return _str(1, name) + _bytes(2, _bytes(1, _int(1, kind) + _bytes(2, shape)))


def _varint(value: int) -> bytes:
    out = bytearray()
    while True:
        low, value = value & 0x7F, value >> 7
        if not value:
            out.append(low)
            return bytes(out)
        out.append(low | 0x80)


def _int(number: int, value: int) -> bytes:
    return _varint(number << 3) + _varint(value)


def _bytes(number: int, payload: bytes) -> bytes:
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _str(number: int, text: str) -> bytes:
    return _bytes(number, text.encode())
