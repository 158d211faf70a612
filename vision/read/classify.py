"""Square classifier at inference: an ONNX network run with ``cv2.dnn`` (no torch needed).

The network reads one crop (``vision.read.crops``) and gives 12 logits: 8 terrains then 4 crown
counts (0-3). :class:`SquareClassifier` turns them into the most probable *valid* reading
(the 48-domino set's facts: field/forest/lake carry 0-1 crown, grassland/swamp 0-2, mine 0-3,
castle/empty none), a calibrated confidence, and flags for squares a person should check.
"""
from __future__ import annotations

import hashlib
import json
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path

import cv2
import numpy as np

from models import MODELS_DIR
from vision.read.dominoes import _softmax, decode
from vision.read.labels import (MAX_CROWNS, N_CROWNS, TERRAINS, VALID, domino_partners,  # noqa: F401
                           game_crown_prior, square_supply, supply_capacity)



@dataclass
class SquareReading:
    terrain: str
    crowns: int
    confidence: float
    flags: list = field(default_factory=list)   # why a person should check it (may be empty)
    crown_odds: tuple = ()    # the read terrain's probability with 0..3 crowns (empty: unknown)


def castle_flags(readings: list[list[SquareReading]], logits: np.ndarray, t_terrain: float = 1.0,
                 candidates: int = 1) -> None:
    """Every kingdom has one castle: with none read, or only one read with less than even odds
    (``decode(one_castle=True)`` places it on the likeliest square), flag the ``candidates``
    most castle-like squares; with several, flag them all."""
    squares = [sq for row in readings for sq in row]
    castles = [sq for sq in squares if sq.terrain == "castle"]
    if len(castles) == 1 and castles[0].confidence < 0.5:
        castles = []
    if len(castles) > 1:
        for sq in castles:
            sq.flags.append("more than one castle read: a kingdom has one")
    elif not castles and squares:
        lg = np.asarray(logits, dtype=np.float64).reshape(len(squares), -1)
        p_castle = _softmax(lg[:, :len(TERRAINS)] / t_terrain)[:, TERRAINS.index("castle")]
        for i in np.argsort(-p_castle)[:max(1, candidates)]:
            squares[int(i)].flags.append("no square looks clearly like the castle: "
                                         "this one is among the most like it")


def supply_flags(readings: list[list[SquareReading]], supply: Counter | None = None) -> None:
    """Flag readings that need more squares of a kind than the game has (two 3-crown mines...)."""
    supply = supply if supply is not None else square_supply()
    seen: dict = {}
    for r, row in enumerate(readings):
        for c, sq in enumerate(row):
            if sq.terrain in ("empty", "castle"):
                continue
            seen.setdefault((sq.terrain, sq.crowns), []).append(sq)
    for key, squares in seen.items():
        if len(squares) > supply.get(key, 0):
            for sq in squares:
                sq.flags.append(f"more {key[0]} squares with {key[1]} crown(s) than the game has")


# squares whose movers ``SquareClassifier.moved_by`` remembers (a reading's search reads a few
# hundred)
MOVED_KEPT = 4096
# crop sets whose turns' logits are remembered (least recently read forgotten first): a hard
# photo's search reads the same windows again from later outlines, the whole-table search and
# the second tile network's search; a set's entry is its logits and features (a 7x7's: 27 kB,
# so under 2 MB for all of them)
TURNS_KEPT = 64


def _keep(store: dict, logits: np.ndarray, values) -> None:
    """Remember each square's value in ``store`` under the logits it was read with (float32
    bytes, as :meth:`SquareClassifier.moved_by` and :meth:`SquareClassifier.features_of` look
    it up), the newest last, the oldest forgotten past ``MOVED_KEPT`` squares."""
    for row, value in zip(np.asarray(logits, np.float32), values):
        key = row.tobytes()
        store.pop(key, None)
        store[key] = value
    while len(store) > MOVED_KEPT:
        store.pop(next(iter(store)))


class SquareClassifier:
    """Loads ``models/squares.onnx`` (and its ``squares.json``) once; reads batches of crops."""

    def __init__(self, model_path: str | Path | None = None, cfg: dict | None = None,
                 load_network: bool = True, learn_cfg: dict | None = None):
        from vision import config

        self.cfg = cfg if cfg is not None else config.load()["classify"]
        learn_cfg = learn_cfg if learn_cfg is not None else config.load()["learn"]
        path = Path(model_path) if model_path else MODELS_DIR / self.cfg["model"]
        if not path.exists():
            raise FileNotFoundError(
                f"square classifier model {path} is missing: run `kingdomino train` to build it")
        self.path = path
        data = path.read_bytes()
        # which network this is (``network_identity``): learned examples record it, and a
        # reader reads only with examples whose features this same network made
        self.identity = network_identity(data)
        # without the network it only decodes saved outputs (``kingdomino evaluate --from-outputs``);
        # with it, the tensor feeding the last layer is a second output (``features``)
        self.net, self.outputs = _load_net(path, data) if load_network else (None, None)
        meta_path = path.with_suffix(".json")
        self.meta = json.loads(meta_path.read_text()) if meta_path.exists() else {}
        cal = self.meta.get("calibration", {})
        self.t_terrain = float(cal.get("t_terrain", 1.0))
        self.t_crowns = float(cal.get("t_crowns", 1.0))
        self.input_size = int(self.meta.get("input_size", self.cfg["cell"] + 2 * self.cfg["crop_margin"]))
        # the margin dimming is part of the model: read it from what the model was trained with
        self.margin = int(self.meta.get("crop_margin", self.cfg["crop_margin"]))
        self.margin_weight = float(self.meta.get("margin_weight", self.cfg["margin_weight"]))
        self.supply = square_supply()
        self.partners = domino_partners()
        self.capacity = supply_capacity(self.supply)
        self.prior = None
        # each quarter turn's logits of the last TURNS_KEPT crop sets read: a grid read at one
        # turn to compare frames and then in full costs its first turn once
        self._turns_read: dict = {}
        # what the store's corrections taught (vision.read.learned): every ``logits`` call
        # reads with them; ``last_used`` is how many of them its squares were moved by
        self.examples = None
        self.learn_cfg = learn_cfg
        self.last_used = 0
        self._moved: dict = {}       # a square's logits (bytes) -> the examples that moved it
        self._features: dict = {}    # a square's logits (bytes) -> its features (as cut)
        self.set_crown_prior(self.meta.get("crown_train_prior"), self.meta.get("crown_label_prior"))

    def set_crown_prior(self, trained, labelled) -> None:
        """Undo the crown head's training prior (``[classify] crown_prior``).

        ``trained``: share of each crown count in what the network was shown (oversampled);
        ``labelled``: its share among real squares. ``"marginal"`` swaps one for the other;
        ``"dominoes"`` uses the game's crowns-given-terrain odds instead of ``labelled``.
        """
        mode = self.cfg["crown_prior"]
        if mode not in ("none", "marginal", "dominoes"):
            raise ValueError(f"[classify] crown_prior must be none, marginal or dominoes, not {mode!r}")
        self.prior = None
        if mode == "none" or not trained:  # a model without the record reads uncorrected
            return
        trained = np.maximum(np.asarray(trained, float), 1e-9)
        if mode == "marginal" and labelled:
            self.prior = np.tile(np.asarray(labelled, float) / trained, (len(TERRAINS), 1))
        elif mode == "dominoes" and self.supply:
            self.prior = game_crown_prior(self.supply) / trained[None]

    def logits(self, crops: np.ndarray, first_turn_only: bool = False) -> np.ndarray:
        """BGR uint8 crops ``(N, S, S, 3)`` -> raw logits ``(N, 12)``, averaged over the quarter
        turns of ``[classify] tta`` (``first_turn_only``: the crops as cut, a cheaper reading
        for comparing frames). A square whose reading as cut is already sure (its likeliest
        terrain and crown count both at least ``[classify] tta_sure``, calibrated) keeps that
        reading: the other turns are read for the unsure squares only. The last few crop
        sets' turns are remembered: the same crops read again cost only the turns not read
        yet, and give the same numbers. With learned examples (:meth:`set_examples`) each
        square's logits are then moved toward the labels of the examples that look like it
        (``vision.read.learned.adapt``); ``last_used`` says by how many."""
        crops = np.asarray(crops)
        self.last_used = 0
        if len(crops) == 0:
            return np.zeros((0, len(TERRAINS) + N_CROWNS), dtype=np.float32)
        crops = self._sized(crops)
        turns = tta_turns(self.cfg["tta"])[:1 if first_turn_only else None]
        which = self._key(crops)
        learning = self.examples is not None and len(self.examples) > 0
        # the crops as cut (turn 0) give the features the examples are compared with, and
        # that say how unlike the tiles a square looks (vision.read.novelty): same network run
        first, feats = self._turn(crops, which, turns[0], None,
                                  features=self.outputs is not None)
        out = first
        if len(turns) > 1:
            unsure = np.flatnonzero(~self.sure(first, float(self.cfg["tta_sure"])))
            out = first.copy()
            if len(unsure):
                # a square reads the same turned by 90 degrees: average its turns
                total = first[unsure].copy()
                for k in turns[1:]:
                    total += self._turn(crops, which, k, unsure)[0]
                out[unsure] = total / len(turns)
        if learning:
            from vision.read import learned

            out, moved_by = learned.vote(out, feats, self.examples, self.learn_cfg,
                                         (self.t_terrain, self.t_crowns))
            self.last_used = len(frozenset().union(*moved_by))
            _keep(self._moved, out, moved_by)          # what moved each square read
        if feats is not None:
            _keep(self._features, out, feats)          # for features_of
        return out

    def features_of(self, logits: np.ndarray) -> np.ndarray:
        """The features ``(N, D)`` of squares known by the logits :meth:`logits` gave them
        (among the last ``MOVED_KEPT`` squares read); a row of NaN for a square it does not
        know (a square read as table without the network, a model without features)."""
        rows = np.asarray(logits, np.float32).reshape(len(logits), -1)
        known = [self._features.get(row.tobytes()) for row in rows]
        width = next((len(f) for f in known if f is not None), 1)
        out = np.full((len(rows), width), np.nan, np.float32)
        for i, f in enumerate(known):
            if f is not None:
                out[i] = f
        return out

    def moved_by(self, logits: np.ndarray) -> frozenset:
        """The examples (their positions in ``examples``) that moved these squares, each
        square known by the logits this classifier gave it; a square it does not know (not
        read with the current examples, or among the last ``MOVED_KEPT`` squares read) adds
        none."""
        rows = np.asarray(logits, np.float32).reshape(len(logits), -1)
        return frozenset().union(*(self._moved.get(row.tobytes(), ()) for row in rows))

    def features(self, crops: np.ndarray) -> np.ndarray:
        """BGR uint8 crops ``(N, S, S, 3)`` as cut -> the network's features ``(N, D)``
        float32, each row of length 1: the tensor its last layer reads, from the same run of
        the network as the logits (and remembered with them)."""
        if self.outputs is None:
            raise RuntimeError(f"the square classifier {self.path.name} gives no features: "
                               "no tensor feeds its last layer alone")
        crops = np.asarray(crops)
        if len(crops) == 0:
            return np.zeros((0, 0), np.float32)
        crops = self._sized(crops)
        return self._turn(crops, self._key(crops), 0, None, features=True)[1]

    def set_examples(self, examples) -> None:
        """Read with these learned examples from now on (a ``vision.read.learned.Examples``,
        a list of ``Example``; None or empty: read as the network alone does)."""
        from vision.read import learned

        if examples is not None and not isinstance(examples, learned.Examples):
            examples = learned.Examples(list(examples))
        self.examples = examples if examples is not None and len(examples) else None
        self._moved.clear()

    def examples_used(self, crops: np.ndarray) -> int:
        """How many distinct learned examples move the reading of these crops (0 without
        examples)."""
        if self.examples is None or len(crops) == 0:
            return 0
        from vision.read import learned

        return learned.influence(self.features(crops), self.examples, self.learn_cfg)

    def _sized(self, crops: np.ndarray) -> np.ndarray:
        if crops.shape[1] != self.input_size or crops.shape[2] != self.input_size:
            crops = np.stack([cv2.resize(c, (self.input_size, self.input_size),
                                         interpolation=cv2.INTER_AREA) for c in crops])
        return crops

    @staticmethod
    def _key(crops: np.ndarray) -> tuple:
        return (crops.shape, hashlib.blake2b(np.ascontiguousarray(crops).data,
                                             digest_size=16).digest())

    def sure(self, logits: np.ndarray, p: float) -> np.ndarray:
        """Squares whose likeliest terrain and likeliest crown count both have a calibrated
        probability of at least ``p`` (``p`` over 1: none)."""
        lg = np.asarray(logits, np.float64)
        nt = len(TERRAINS)
        return ((_softmax(lg[:, :nt] / self.t_terrain).max(axis=1) >= p)
                & (_softmax(lg[:, nt:] / self.t_crowns).max(axis=1) >= p))

    def _turn(self, crops: np.ndarray, which, k: int, subset, features: bool = False) -> tuple:
        """The network's raw outputs ``(logits, features or None)`` for crops (all, or those
        at the indices ``subset``) turned by ``k`` quarter turns, remembered for the last few
        crop sets (``features``: with the features, run again if they were not kept)."""
        key = (which, k, None if subset is None else subset.tobytes())
        got = self._turns_read.pop(key, None)
        if got is None or (features and got[1] is None):
            part = crops if subset is None else crops[subset]
            part = np.rot90(part, k, axes=(1, 2)) if k else part
            got = self._forward(part, features=True) if features else (self._forward(part), None)
            while len(self._turns_read) >= TURNS_KEPT:
                self._turns_read.pop(next(iter(self._turns_read)))
        self._turns_read[key] = got     # the most recently read last
        return got

    def _forward(self, crops: np.ndarray, features: bool = False):
        """The network's raw outputs for crops as given, ``[classify] batch`` at a time: the
        logits, or (``features``) the logits and the L2-normalised features of the same run."""
        out, feats = [], []
        bs = int(self.cfg["batch"])
        for i in range(0, len(crops), bs):
            blob = preprocess(crops[i:i + bs], self.margin, self.margin_weight)
            self.net.setInput(blob)
            if features:
                lg, ft = self.net.forward(list(self.outputs))
                feats.append(np.array(ft, np.float32).reshape(len(blob), -1))
            else:
                lg = self.net.forward()
            out.append(np.array(lg).reshape(len(blob), -1))
        logits = np.concatenate(out, axis=0)
        if not features:
            return logits
        ft = np.concatenate(feats, axis=0)
        return logits, ft / np.maximum(np.linalg.norm(ft, axis=1, keepdims=True), 1e-12)

    def read(self, crops: np.ndarray, rows: int, cols: int) -> list[list[SquareReading]]:
        """Crops of a ``rows x cols`` board (row by row) -> readings with flags."""
        return self.read_logits(self.logits(crops), rows, cols)

    def read_logits(self, logits: np.ndarray, rows: int, cols: int) -> list[list[SquareReading]]:
        """Network outputs of a ``rows x cols`` board -> readings with flags."""
        max_cost = self.cfg["tiling_max_cost"]
        report: dict = {}
        t, c, conf, raw_invalid = decode(logits, self.t_terrain, self.t_crowns, self.prior,
                                         shape=(rows, cols), partners=self.partners,
                                         partner_floor=float(self.cfg["partner_floor"]),
                                         one_castle=bool(self.cfg["one_castle"]),
                                         capacity=self.capacity if self.cfg["within_supply"] else None,
                                         tiling_max_cost=None if max_cost is False else float(max_cost),
                                         report=report)
        odds = report["odds"]
        grid = []
        for r in range(rows):
            row = []
            for k in range(cols):
                i = r * cols + k
                sq = SquareReading(TERRAINS[t[i]], int(c[i]), float(conf[i]),
                                   crown_odds=tuple(float(p) for p in odds[i, t[i]]))
                if raw_invalid[i]:
                    sq.flags.append("the most likely reading is not a square of the game")
                if i in report.get("retiled", ()):
                    sq.flags.append("read as its next best so the kingdom can be laid out "
                                    "with the game's dominoes")
                if i in report.get("unpaired", ()):
                    sq.flags.append("no neighbour completes this square to a domino of the game")
                row.append(sq)
            grid.append(row)
        if self.supply:
            supply_flags(grid, self.supply)
        castle_flags(grid, logits, self.t_terrain, int(self.cfg["no_castle_candidates"]))
        return grid


def tta_turns(tta) -> tuple:
    """Quarter turns each crop is read in (``[classify] tta``): 4 (all), 2 (upright and upside
    down), 1 (as cut); ``true``/``false`` mean 4/1."""
    n = (4 if tta else 1) if isinstance(tta, bool) else tta
    if n not in (1, 2, 4):
        raise ValueError(f"[classify] tta must be 1, 2 or 4 quarter turns (or true/false), got {tta!r}")
    return {1: (0,), 2: (0, 2), 4: (0, 1, 2, 3)}[n]


def preprocess(crops: np.ndarray, margin: int = 0, margin_weight: float = 1.0) -> np.ndarray:
    """uint8 BGR crops ``(N, S, S, 3)`` -> float32 NCHW blob scaled to 0..1 (same in training).

    The ``margin`` px strip around each crop (the neighbours' edges, kept so a shifted tile
    or a crown on the edge is still seen) is multiplied by ``margin_weight``: dimmed, the
    network can tell the square it reads from its neighbours and their crowns.
    """
    x = np.asarray(crops, dtype=np.float32) / 255.0
    m = int(margin)
    if margin_weight != 1.0 and m > 0 and x.shape[1] > 2 * m and x.shape[2] > 2 * m:
        w = np.full(x.shape[1:3], margin_weight, np.float32)
        w[m:-m, m:-m] = 1.0
        x = x * w[None, :, :, None]
    return np.ascontiguousarray(x.transpose(0, 3, 1, 2))


# --- the network with its features as a second output --------------------------------------
# OpenCV's dnn returns only a graph's outputs, so the tensor that feeds the layer making the
# logits is added to the ONNX graph's outputs (in memory, the file is left as it is): one run
# of the network then gives both. The few protobuf fields this needs are read here by hand,
# so reading needs no onnx package: ModelProto.graph is field 7, GraphProto.node 1 and
# .output 12, NodeProto.input 1 and .output 2, ValueInfoProto.name 1.

def _varint(data: bytes, i: int) -> tuple[int, int]:
    value = shift = 0
    while True:
        byte = data[i]
        i += 1
        value |= (byte & 0x7F) << shift
        shift += 7
        if byte < 0x80:
            return value, i


def _encode_varint(value: int) -> bytes:
    out = bytearray()
    while True:
        low, value = value & 0x7F, value >> 7
        out.append(low | (0x80 if value else 0))
        if not value:
            return bytes(out)


def _fields(data: bytes):
    """``(field number, bytes or None, start, end)`` of each field of a protobuf message
    (the bytes of length-delimited fields only)."""
    i = 0
    while i < len(data):
        tag, j = _varint(data, i)
        kind = tag & 7
        if kind == 0:
            end, value = _varint(data, j)[1], None
        elif kind == 1:
            end, value = j + 8, None
        elif kind == 5:
            end, value = j + 4, None
        elif kind == 2:
            n, j = _varint(data, j)
            end, value = j + n, data[j:j + n]
        else:
            raise ValueError(f"protobuf wire type {kind} is not read here")
        yield tag >> 3, value, i, end
        i = end


def _strings(message: bytes, number: int) -> list[str]:
    return [v.decode() for f, v, _, _ in _fields(message) if f == number and v is not None]


def _with_features(model: bytes) -> tuple[bytes, tuple[str, str]] | None:
    """The ONNX model's bytes with the input of the node making its one output added as a
    second output, and the two output names; None for a model not made so."""
    graph = [(v, s, e) for f, v, s, e in _fields(model) if f == 7]
    if len(graph) != 1:
        return None
    body, start, end = graph[0]
    outputs = [_strings(v, 1)[0] for f, v, _, _ in _fields(body) if f == 12]
    if len(outputs) != 1:
        return None
    makers = [_strings(v, 1) for f, v, _, _ in _fields(body)
              if f == 1 and outputs[0] in _strings(v, 2)]
    if len(makers) != 1 or not makers[0]:
        return None
    name = makers[0][0].encode()
    info = b"\x0a" + _encode_varint(len(name)) + name          # ValueInfoProto.name
    body = body + b"\x62" + _encode_varint(len(info)) + info   # GraphProto.output
    model = model[:start] + b"\x3a" + _encode_varint(len(body)) + body + model[end:]
    return model, (outputs[0], name.decode())


def network_identity(data: bytes) -> str:
    """Which square network a model file is: the first 16 hex digits of the SHA-256 of its
    bytes. Two networks of one shape (a retrained one) give features of the same length but
    of unlike spaces; their identities differ."""
    return hashlib.sha256(data).hexdigest()[:16]


def _load_net(path: Path, data: bytes | None = None):
    """``(net, (logits name, features name))``: the network read with its features as a
    second output, or ``(net, None)`` where the model's graph gives none. ``data``: the
    file's bytes when already read."""
    data = path.read_bytes() if data is None else data
    try:
        made = _with_features(data)
    except (ValueError, IndexError, UnicodeDecodeError):
        made = None
    if made is not None:
        try:
            return cv2.dnn.readNetFromONNX(np.frombuffer(made[0], np.uint8)), made[1]
        except cv2.error:
            pass
    return cv2.dnn.readNetFromONNX(str(path)), None
