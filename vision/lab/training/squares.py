"""``kingdomino train``: build ``models/squares.onnx`` from the dev photos of both datasets.

Every dev photo is decoded as the reader decodes it (``reader_view``: a 12 MP JPEG at half
its side) and rectified with its corners (the AAU photos already are boards: their corners are
the image corners) through ``vision.read.crops`` -- the same crop path the reader uses -- and a small CNN with two heads (terrain, crowns) is trained with torch on the CPU,
then exported to ONNX for ``cv2.dnn``. Holdout photos are never loaded.
"""
from __future__ import annotations

import datetime as _dt
import json
import time
from pathlib import Path

import cv2
import numpy as np

from vision import config as _config
from vision.read.classify import MODELS_DIR, N_CROWNS, TERRAINS, preprocess
from vision.read.crops import cell_crops, crop_size, image_corners, rectify

AUG_PAD = 16            # extra px cut around each training crop so shifts/rotations stay real
AUG_GLARE = 0.0         # share of training crops given a patch of glare (light reflected off the tiles)
AUG_SHIFT = 0.14        # largest random shift of a training crop, fraction of (crop side - 24 px)
DEFAULT_EPOCHS = 40


# ----------------------------------------------------------------------------- data
def photo_training_crops(image: np.ndarray, corners, rows: int, cols: int, cfg: dict,
                         pad: int = AUG_PAD) -> np.ndarray:
    """Crops of every cell, ``pad`` px larger on each side than the reader's crops."""
    if corners is None:
        corners = image_corners(image)
    board, _ = rectify(image, corners, rows, cols, cfg["cell"], cfg["board_margin"])
    return cell_crops(board, rows, cols, cfg["cell"], board_margin=cfg["board_margin"],
                      crop_margin=cfg["crop_margin"] + pad)


def reader_view(photo, io_cfg=None) -> tuple[np.ndarray, object]:
    """A dev photo as the reader decodes it (``vision.photo.scale.load_for_reading``: a 12 MP
    JPEG 2 times smaller a side with ``[io] read_long_side`` 2000) and its labelled corners in
    that image's pixels (``None`` for a rectified AAU board): the crops the network learns
    from are cut from the same pixels as the crops it reads."""
    from vision.photo import scale

    full = _config.load()
    if io_cfg is not None:
        full = {**full, "io": io_cfg}
    image, factor = scale.load_for_reading(str(photo.path), full)
    corners = photo.corners
    if corners is not None:
        corners = scale.to_reduced_pixels(corners, factor)
    return image, corners


def load_examples(photos, cfg: dict, pad: int = AUG_PAD):
    """Dev photos -> (crops, terrain index, crowns, board id) arrays."""
    xs, ts, cs, bs = [], [], [], []
    for b, photo in enumerate(photos):
        image, corners = reader_view(photo)
        crops = photo_training_crops(image, corners, photo.rows, photo.cols, cfg, pad)
        xs.append(crops)
        for r in range(photo.rows):
            for c in range(photo.cols):
                ts.append(TERRAINS.index(photo.terrain[r][c]))
                cs.append(int(photo.crowns[r][c]))
                bs.append(b)
    return (np.concatenate(xs), np.array(ts, np.int64), np.array(cs, np.int64),
            np.array(bs, np.int64))


def rendered_examples(n_boards: int, cfg: dict, rng: np.random.Generator, pad: int = AUG_PAD,
                      drill: int = 0):
    """Procedurally drawn kingdoms (``vision.lab.scenes.render``) as extra training squares.

    Half of them are also put into a generated photo (``vision.lab.scenes.synth``: tilt, light, blur,
    JPEG) and rectified back from their known corners, as the reader would see them.

    ``drill`` > 0: a crown-counting drill instead. On each board that many tile squares (not
    the castle) become mines with 1-3 crowns drawn at random, and only those squares (and,
    with ``PLAIN_START``, the start square) come back. The game has a single 3-crown mine,
    so the real photos teach its picture, not the count.

    ``PLAIN_START`` of the boards draw the start square as other printings have it (bare sand
    in a grass band): among the dev photos only one player's show it, and bare, it was read as
    table.
    """
    from vision.lab.scenes import render
    from vision.lab.scenes import synth

    xs, ts, cs = [], [], []
    for k in range(n_boards):
        # a failure here is a bug to see, not a reason to train quietly without these boards
        size = 7 if rng.random() < 0.25 else 5
        lay = render.random_layout(rng, size=size)
        terrain, crowns = lay["terrain"], lay["crowns"]
        keep = None
        if drill:
            terrain, crowns, keep = drill_mines(terrain, crowns, rng, drill)
        if drill and PLAIN_START:    # the start square comes back too (both printings)
            keep = [[k or t == "castle" for k, t in zip(kr, tr)] for kr, tr in zip(keep, terrain)]
        start = "plain" if PLAIN_START and rng.random() < PLAIN_START else "printed"
        cell = int(rng.integers(64, 112))
        img, mask = render.render_board(terrain, crowns, cell, rng, dominoes=lay["dominoes"],
                                        return_mask=True, start=start)
        corners = None
        if k % 2 == 1:
            img, corners, terrain, crowns, keep = photographed(
                synth, img, terrain, crowns, rng, int(rng.integers(1400, 2200)), mask,
                np.zeros((size, size), bool) if keep is None else np.array(keep, bool))
        crops = photo_training_crops(img, corners, size, size, cfg, pad)
        sel = np.asarray(keep, bool).reshape(-1) if drill else slice(None)
        xs.append(crops[sel])
        ts += list(np.array([TERRAINS.index(t) for row in terrain for t in row])[sel])
        cs += list(np.array([int(c) for row in crowns for c in row])[sel])
    if not xs:
        return None
    return np.concatenate(xs), np.array(ts, np.int64), np.array(cs, np.int64)


def drill_mines(terrain, crowns, rng: np.random.Generator, n: int):
    """``n`` random tile squares (not the castle) of a layout made mines with 1-3 crowns (uniform).
    Returns the new grids and a mask of the changed squares."""
    rows, cols = len(terrain), len(terrain[0])
    terrain = [list(row) for row in terrain]
    crowns = [list(row) for row in crowns]
    keep = [[False] * cols for _ in range(rows)]
    cells = [(r, c) for r in range(rows) for c in range(cols)
             if terrain[r][c] not in ("castle", "empty")]
    for k in rng.permutation(len(cells))[:n]:
        r, c = cells[int(k)]
        terrain[r][c], crowns[r][c], keep[r][c] = "mine", int(rng.integers(1, 4)), True
    return terrain, crowns, keep


def photographed(synth, board, terrain, crowns, rng, width: int, mask=None, extra=None):
    """A board put into a generated phone photo ``width`` px wide (``vision.lab.scenes.synth``), with its
    corners there and its label grids turned as the photo turned it (``extra``, a per-square
    grid, turned the same way and returned last when given)."""
    scene, corners, info = synth.make_scene(board, rng, width=width, board_mask=mask,
                                            return_info=True)
    out = (scene, corners, synth.scene_grid(terrain, info["turns"]),
           synth.scene_grid(crowns, info["turns"]))
    if extra is None:
        return out
    return out + (synth.scene_grid(extra, info["turns"]),)


def blank_border_squares(shape, terrain, crowns, rng: np.random.Generator, n: int):
    """Mask (255 = tile) hiding ``n`` random non-castle squares on the board's outer ring, and
    the labels with those squares made ``empty``."""
    rows, cols = len(terrain), len(terrain[0])
    h, w = shape[:2]
    mask = np.full((h, w), 255, np.uint8)
    ring = [(r, c) for r in range(rows) for c in range(cols)
            if (r in (0, rows - 1) or c in (0, cols - 1)) and terrain[r][c] not in ("castle", "empty")]
    terrain = [list(row) for row in terrain]
    crowns = [list(row) for row in crowns]
    for k in rng.permutation(len(ring))[:n]:
        r, c = ring[int(k)]
        y0, y1 = round(r * h / rows), round((r + 1) * h / rows)
        x0, x1 = round(c * w / cols), round((c + 1) * w / cols)
        mask[y0:y1, x0:x1] = 0
        terrain[r][c], crowns[r][c] = "empty", 0
    return mask, terrain, crowns


def scene_examples(photos, cfg: dict, rng: np.random.Generator, share: float = 1.0,
                   pad: int = AUG_PAD):
    """The rectified (AAU) training boards put into generated phone photos (``vision.lab.scenes.synth``:
    table, tilt, light, glare, blur, JPEG) and cut back out from their known corners, as the
    reader sees a photographed board. Returns (crops, terrain index, crowns, board index)."""
    from vision.lab.scenes import synth

    xs, ts, cs, bs = [], [], [], []
    for i, photo in enumerate(photos):
        if photo.corners is not None or rng.random() >= share:
            continue                      # phone photos already are photos
        image = cv2.imread(str(photo.path), cv2.IMREAD_COLOR)
        if image is None:
            raise ValueError(f"cannot read {photo.path}")
        terrain, crowns, mask = photo.terrain, photo.crowns, None
        if SCENE_BLANK > 0:
            # a half-built kingdom: a few border squares lifted off, the table shows through
            mask, terrain, crowns = blank_border_squares(image.shape, terrain, crowns, rng,
                                                        int(rng.integers(0, SCENE_BLANK + 1)))
        scene, corners, terrain, crowns = photographed(
            synth, image, terrain, crowns, rng, int(rng.integers(1400, 2400)), mask)
        xs.append(photo_training_crops(scene, corners, photo.rows, photo.cols, cfg, pad))
        ts += [TERRAINS.index(t) for row in terrain for t in row]
        cs += [int(c) for row in crowns for c in row]
        bs += [i] * (photo.rows * photo.cols)
    if not xs:
        return None
    return np.concatenate(xs), np.array(ts, np.int64), np.array(cs, np.int64), np.array(bs, np.int64)


def augment(crop: np.ndarray, out: int, rng: np.random.Generator, strong: bool = True) -> np.ndarray:
    """One random view of a padded crop: 90-degree turns, small rotation/scale/shift, colour
    casts, blur, noise, JPEG. Output is ``out x out`` around the (moved) centre."""
    h, w = crop.shape[:2]
    k = int(rng.integers(4))
    if k:
        crop = np.ascontiguousarray(np.rot90(crop, k))
    angle = rng.normal(0, 4) if strong else 0.0
    scale = float(np.exp(rng.normal(0, 0.06))) if strong else 1.0
    shift = rng.uniform(-AUG_SHIFT, AUG_SHIFT, size=2) * (out - 24) if strong else np.zeros(2)
    m = cv2.getRotationMatrix2D((w / 2, h / 2), angle, scale)
    m[:, 2] += (out / 2 - w / 2) + shift
    if strong:
        m[:, :2] += rng.normal(0, 0.03, size=(2, 2))   # slight shear: perspective jitter
    img = cv2.warpAffine(crop, m, (out, out), flags=cv2.INTER_LINEAR, borderMode=cv2.BORDER_REFLECT)
    if not strong:
        return img
    x = img.astype(np.float32)
    gain = np.exp(rng.normal(0, 0.12, size=3)).astype(np.float32)       # colour cast
    if rng.random() < 0.3:
        gain *= np.array([0.85, 0.95, 1.15], np.float32)                 # warm indoor light
    x = x * gain * float(np.exp(rng.normal(0, 0.2))) + rng.normal(0, 10)
    if rng.random() < AUG_GLARE:
        x = add_glare(x, rng)
    if rng.random() < 0.3:
        gamma = float(np.exp(rng.normal(0, 0.2)))
        x = 255.0 * (np.clip(x, 0, 255) / 255.0) ** gamma
    if rng.random() < 0.3:
        s = float(rng.uniform(0.3, 1.4))
        x = cv2.GaussianBlur(x, (0, 0), s)
    if rng.random() < 0.3:
        x = x + rng.normal(0, rng.uniform(2, 8), size=x.shape).astype(np.float32)
    img = np.clip(x, 0, 255).astype(np.uint8)
    if rng.random() < 0.3:
        q = int(rng.integers(35, 90))
        ok, enc = cv2.imencode(".jpg", img, [cv2.IMWRITE_JPEG_QUALITY, q])
        if ok:
            img = cv2.imdecode(enc, cv2.IMREAD_COLOR)
    return img


def add_glare(x: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Wash part of a float crop towards white, as a lamp's reflection on glossy tiles does."""
    h, w = x.shape[:2]
    cy, cx = rng.uniform(-0.2, 1.2, size=2) * (h, w)
    sigma = float(rng.uniform(0.2, 0.8)) * max(h, w)
    yy, xx = np.mgrid[0:h, 0:w]
    a = float(rng.uniform(0.3, 0.9)) * np.exp(-((yy - cy) ** 2 + (xx - cx) ** 2) / (2 * sigma ** 2))
    return x + a[..., None].astype(np.float32) * (255.0 - x)


def centre(crops: np.ndarray, out: int) -> np.ndarray:
    """The reader's view of padded crops (no augmentation)."""
    h = crops.shape[1]
    o = (h - out) // 2
    return crops[:, o:o + out, o:o + out]


# ----------------------------------------------------------------------------- model
def build_model(width: int | None = None):
    """The two-head CNN; ``width`` multiplies every layer's channels (default ``MODEL_WIDTH``)."""
    import torch.nn as nn

    width = MODEL_WIDTH if width is None else int(width)

    def full(cin, cout, stride=1):
        return [nn.Conv2d(cin, cout, 3, stride=stride, padding=1, bias=False),
                nn.BatchNorm2d(cout), nn.ReLU(inplace=True)]

    def separable(cin, cout, stride=1):   # each channel's own 3x3, then a 1x1 mixing them
        return [nn.Conv2d(cin, cin, 3, stride=stride, padding=1, groups=cin, bias=False),
                nn.BatchNorm2d(cin), nn.ReLU(inplace=True),
                nn.Conv2d(cin, cout, 1, bias=False), nn.BatchNorm2d(cout), nn.ReLU(inplace=True)]

    if CONV not in ("full", "separable"):
        raise ValueError(f"CONV must be 'full' or 'separable', not {CONV!r}")
    block = full if CONV == "full" else separable
    ch = [16 * width, 32 * width, 48 * width, 64 * width]
    layers = full(3, ch[0], stride=2)                                    # 88 -> 44
    if DOWNSAMPLE == "pool":        # each 3x3 at full size, then pooled
        layers += block(ch[0], ch[1]) + [nn.MaxPool2d(2)]                 # -> 22
        layers += block(ch[1], ch[2]) + [nn.MaxPool2d(2)]                 # -> 11
    else:                           # "stride": the same layers, each computed at the size it keeps
        layers += block(ch[0], ch[1], stride=2)                           # -> 22
        layers += block(ch[1], ch[2], stride=2)                           # -> 11
    layers += block(ch[2], ch[3]) + block(ch[3], ch[3])
    layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Dropout(0.2),
               nn.Linear(ch[3], len(TERRAINS) + N_CROWNS)]
    return nn.Sequential(*layers)


BUILDING_CROWNS = 3.0    # crowned grassland/swamp/mine squares are drawn this much more often
RENDERED_EVERY = 6       # one procedurally drawn board (vision.lab.scenes.render) per this many dev photos
SCENE_BLANK = 4          # up to this many border squares of a scene board are lifted off (table shows)
SCENE_SHARE = 1.0        # share of the rectified training boards also put into one generated photo
PHONE_WEIGHT = 2.0       # phone-photo squares are drawn this much more often (harder, fewer)
MINE_DRILL = 4           # squares per drawn board made crowned mines in the crown-counting drill
PLAIN_START = 0.0        # share of drawn boards whose start square is the bare one of other printings
MODEL_WIDTH = 2          # channel multiplier of the network (1: 16-32-48-64 channels)
DOWNSAMPLE = "pool"      # 44 -> 22 -> 11 px: "pool" 3x3 then 2x2 max pool; "stride" strided 3x3s (the same weights, half the work)
CONV = "full"            # after the first layer: "full" 3x3 convolutions; "separable" each a per-channel 3x3 and a 1x1 (an eighth of the weights, a quarter of the work)
TABLE_BOARDS = 20        # drawn kingdoms on hard tables (vision.lab.scenes.table_squares): the table around them is `empty`
TABLE_RING = 1           # ... cut with this many squares of table beyond the kingdom on every side (2: worse, docs/reader.md)


def sampling_weights(t: np.ndarray, c: np.ndarray, boost: np.ndarray | None = None) -> np.ndarray:
    """How often each training square is drawn: the very rare 3-crown mine, mines, and the
    crowned grassland/swamp/mine squares more often, and ``boost`` (per square) on top."""
    # Oversampling 2-crown squares alone taught the net that a building picture means two
    # crowns (1-crown swamp/mine/grassland read as 2). Drawing the crowned grassland, swamp and
    # mine squares -- one and two crowns alike, the pictures that differ only in the crowns --
    # BUILDING_CROWNS times as often teaches it to count instead.
    w = np.ones(len(c))
    w[c == 3] = 3.0
    w[t == TERRAINS.index("mine")] *= 1.5
    building = np.isin(t, [TERRAINS.index(x) for x in ("grassland", "swamp", "mine")]) & (c > 0)
    w[building] *= BUILDING_CROWNS
    if boost is not None:
        w = w * boost
    return w / w.sum()


def crown_sampling_prior(t: np.ndarray, c: np.ndarray, boost: np.ndarray | None = None) -> list[float]:
    """Share of each crown count among the squares the network saw in training.

    Oversampling 2-3 crowns teaches the crown head that they are commoner than they are; the
    reader divides this prior out again (``[classify] crown_prior`` in the config).
    """
    w = sampling_weights(np.asarray(t), np.asarray(c), boost)
    return [float(w[np.asarray(c) == k].sum()) for k in range(N_CROWNS)]


def crown_label_prior(c: np.ndarray) -> list[float]:
    """Share of each crown count among the training squares as they are (no oversampling)."""
    c = np.asarray(c)
    return [float(np.mean(c == k)) for k in range(N_CROWNS)]


def train_model(x, t, c, *, epochs: int, out: int, seed: int = 0, log=None, boost=None,
                margin: int = 0, margin_weight: float = 1.0):
    """Train the two-head CNN on padded crops ``x``; returns the torch model (eval mode)."""
    import torch
    import torch.nn.functional as F

    torch.set_num_threads(2)
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    model = build_model()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=1e-4)
    n = len(x)
    w = sampling_weights(t, c, boost)
    batch = 64
    steps = max(1, n // batch)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=3e-3, total_steps=epochs * steps)
    for ep in range(epochs):
        model.train()
        t0, tot = time.time(), 0.0
        for _ in range(steps):
            idx = rng.choice(n, size=batch, p=w)
            xb = np.stack([augment(x[i], out, rng) for i in idx])
            xb = torch.from_numpy(preprocess(xb, margin, margin_weight))
            logits = model(xb)
            loss = (F.cross_entropy(logits[:, :len(TERRAINS)], torch.from_numpy(t[idx]), label_smoothing=0.05)
                    + F.cross_entropy(logits[:, len(TERRAINS):], torch.from_numpy(c[idx]), label_smoothing=0.05))
            opt.zero_grad()
            loss.backward()
            opt.step()
            sched.step()
            tot += float(loss.detach())
        if log:
            log(f"epoch {ep + 1}/{epochs}: loss {tot / steps:.3f} ({time.time() - t0:.0f} s)")
    model.eval()
    return model


def torch_logits(model, crops: np.ndarray, margin: int = 0, margin_weight: float = 1.0) -> np.ndarray:
    import torch

    with torch.no_grad():
        return np.concatenate([model(torch.from_numpy(preprocess(crops[i:i + 128], margin,
                                                                 margin_weight))).numpy()
                               for i in range(0, len(crops), 128)]) if len(crops) else np.zeros((0, 12))


def export_onnx(model, path: Path, size: int) -> None:
    import torch

    path.parent.mkdir(parents=True, exist_ok=True)
    dummy = torch.zeros(1, 3, size, size)
    torch.onnx.export(model, dummy, str(path), input_names=["crops"], output_names=["logits"],
                      dynamic_axes={"crops": {0: "n"}, "logits": {0: "n"}}, opset_version=13,
                      dynamo=False)


def fit_temperature(logits: np.ndarray, labels: np.ndarray) -> float:
    """The temperature minimising the negative log-likelihood (grid search; robust, no torch)."""
    best, best_t = np.inf, 1.0
    for temp in np.exp(np.linspace(np.log(0.3), np.log(5.0), 60)):
        z = logits / temp
        z = z - z.max(axis=1, keepdims=True)
        nll = -(z[np.arange(len(z)), labels] - np.log(np.exp(z).sum(axis=1))).mean()
        if nll < best:
            best, best_t = nll, float(temp)
    return best_t


# ----------------------------------------------------------------------------- command
def dev_photos(datasets=None, limit=None):
    from vision.lab.datasets import load_aau, load_phone

    root = Path(datasets) if datasets else None
    photos = load_aau(root) + load_phone(root)
    if limit:
        photos = load_aau(root)[: (limit + 1) // 2] + load_phone(root)[: limit // 2]
    return photos


def rendered_boards(n_photos: int) -> int:
    """How many procedurally drawn boards go with ``n_photos`` dev photos into training."""
    return max(2, n_photos // RENDERED_EVERY)


def fit(photos, cfg: dict, epochs: int, seed: int = 0, log=None, rendered: int | None = None,
        table_boards: int | None = None):
    """Train on these photos (plus a modest share of rendered boards, the crown-counting drill
    and ``table_boards`` kingdoms on hard tables, default ``TABLE_BOARDS``). Returns the torch
    model."""
    x, t, c, b = load_examples(photos, cfg)
    scenes = scene_examples(photos, cfg, np.random.default_rng(seed + 2000), SCENE_SHARE) \
        if SCENE_SHARE > 0 else None
    if scenes is not None:
        x, t, c, b = (np.concatenate([x, scenes[0]]), np.concatenate([t, scenes[1]]),
                      np.concatenate([c, scenes[2]]), np.concatenate([b, scenes[3]]))
        if log:
            log(f"added {len(scenes[0])} squares of training boards put into generated photos")
    boost = np.where([photos[i].dataset == "phone" for i in b], PHONE_WEIGHT, 1.0)

    def add(more):      # generated squares (crops, terrain, crowns), drawn at the plain rate
        nonlocal x, t, c, boost
        x, t, c = (np.concatenate([x, more[0]]), np.concatenate([t, more[1]]),
                   np.concatenate([c, more[2]]))
        boost = np.concatenate([boost, np.ones(len(more[0]))])

    table_boards = TABLE_BOARDS if table_boards is None else int(table_boards)
    if table_boards:
        from vision.lab.scenes.table_squares import table_examples

        add(table_examples(table_boards, cfg, TABLE_RING, seed=seed, log=log))
    if rendered is None:
        rendered = rendered_boards(len(photos))
    drawn = [(1000, 0, f"squares from {rendered} rendered boards")]   # (seed offset, drill, what)
    if MINE_DRILL:
        drawn.append((3000, MINE_DRILL, "drawn crowned mines (crown-counting drill)"))
    for offset, drill, what in drawn if rendered else ():
        more = rendered_examples(rendered, cfg, np.random.default_rng(seed + offset), drill=drill)
        if more is None:
            continue
        add(more)
        if log:
            log(f"added {len(more[0])} {what}")
    if log:
        log(f"training on {len(x)} squares from {len(photos)} photos")
    model = train_model(x, t, c, epochs=epochs, out=crop_size(cfg["cell"], cfg["crop_margin"]),
                        seed=seed, log=log, boost=boost, margin=cfg["crop_margin"],
                        margin_weight=float(cfg["margin_weight"]))
    model.crown_train_prior = crown_sampling_prior(t, c, boost)
    model.crown_label_prior = crown_label_prior(c)
    return model


def main(args) -> int:
    cfg = _config.load()["classify"]
    out_dir = Path(args.out) if getattr(args, "out", None) else MODELS_DIR
    epochs = args.epochs or DEFAULT_EPOCHS
    photos = dev_photos(getattr(args, "datasets", None), getattr(args, "limit", None))
    size = crop_size(cfg["cell"], cfg["crop_margin"])
    t0 = time.time()
    limited = bool(getattr(args, "limit", None))
    model = fit(photos, cfg, epochs, log=lambda m: print(m, flush=True),
                rendered=0 if limited else None, table_boards=0 if limited else None)
    onnx_path = out_dir / cfg["model"]
    export_onnx(model, onnx_path, size)
    # check cv2.dnn reads the file and agrees with torch
    x, _, _, _ = load_examples(photos[:1], cfg, pad=0)
    net = cv2.dnn.readNetFromONNX(str(onnx_path))
    mw = float(cfg["margin_weight"])
    net.setInput(preprocess(x, cfg["crop_margin"], mw))
    diff = float(np.abs(np.array(net.forward()).reshape(len(x), -1)
                        - torch_logits(model, x, cfg["crop_margin"], mw)).max())
    meta_path = onnx_path.with_suffix(".json")
    old = json.loads(meta_path.read_text()) if meta_path.exists() else {}
    meta = {
        "model": onnx_path.name,
        "trained": _dt.datetime.now(_dt.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        "epochs": epochs,
        "input_size": size,
        "cell": cfg["cell"], "crop_margin": cfg["crop_margin"], "board_margin": cfg["board_margin"],
        "margin_weight": mw,
        "building_crowns_weight": BUILDING_CROWNS, "phone_weight": PHONE_WEIGHT,
        "scene_share": SCENE_SHARE, "scene_blank": SCENE_BLANK,
        "mine_drill": MINE_DRILL, "plain_start": PLAIN_START, "model_width": MODEL_WIDTH,
        "downsample": DOWNSAMPLE, "conv": CONV,
        "table_boards": 0 if limited else TABLE_BOARDS, "table_ring": TABLE_RING,
        "outputs": {"terrain": list(TERRAINS), "crowns": list(range(N_CROWNS))},
        "crown_train_prior": model.crown_train_prior,
        "crown_label_prior": model.crown_label_prior,
        "photos": [p.name for p in photos],
        "rendered_boards": 0 if limited else rendered_boards(len(photos)),
        "n_photos": {"aau": sum(p.dataset == "aau" for p in photos),
                     "phone": sum(p.dataset == "phone" for p in photos)},
        "onnx_vs_torch_max_abs_diff": diff,
        "train_seconds": round(time.time() - t0),
        # calibration and cross-validation figures come from `kingdomino evaluate` (same recipe)
        "calibration": old.get("calibration", {"t_terrain": 1.0, "t_crowns": 1.0, "source": "none"}),
        "cv": old.get("cv"),
    }
    meta_path.write_text(json.dumps(meta, indent=1) + "\n")
    print(f"wrote {onnx_path} ({onnx_path.stat().st_size / 1e6:.2f} MB); "
          f"cv2.dnn vs torch max |diff| {diff:.2e}")
    # a new network's features: what its known squares look like (vision.read.novelty)
    from vision.lab.training import novelty

    novelty.build(out_dir, getattr(args, "datasets", None), model_path=onnx_path)
    return 0
