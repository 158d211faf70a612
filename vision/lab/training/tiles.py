"""Training of the detector's tile-likelihood network (``vision.find.tilenet`` runs it).

``fit(...)``: trained with torch on generated scenes of procedurally drawn kingdoms
(``vision.lab.training.pixels.synth_training_scenes``; ``HARD_SHARE`` of them on the hard tables of
``vision.lab.scenes.tile_scenes`` among ``KINDS``, printed cloth held out and motif prints drawn for
training only, ``REAL_SHARE`` of those with a photographed AAU dev board instead of a drawn
kingdom) and the dev phone photos' labelled squares;
``python3 -m vision.lab.training.tiles --out models/tiles.onnx`` rebuilds the shipped file, and with
``--lit`` (glare, shadows and far-away kingdoms drawn over the crops) ``models/tiles_lit.onnx``,
the reader's second network (``vision.find.second_net``).
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import cv2
import numpy as np

from vision.lab.scenes import tile_scenes
from vision.find.tilenet import preprocess

CROP = 176          # training crop side (px of the downscaled photo)
EDGE_BAND = 11      # px: tile pixels and table pixels this close together are "near an outline"
# the shipped recipe (models/tiles.json records it)
SCENES = 2000       # generated scenes of drawn kingdoms
STEPS = 4000        # optimiser steps
BATCH = 16          # crops per step
PHONE_SHARE = 0.5   # share of the crops cut from the dev phone photos
EDGE_WEIGHT = 4.0   # loss weight of pixels near a tile outline
HARD_SHARE = 0.5    # share of the generated scenes drawn on hard tables (vision.lab.scenes.tile_scenes)
REAL_SHARE = 0.0    # share of the hard-table scenes with a photographed AAU dev board (0.5 tried: no gain on held-out boards)
# table kinds of the hard-table scenes: the usual ones (printed cloth held out) and the motif
# prints drawn for training only (2026-12-04: the unseen kinds framed better, see docs/detection.md)
KINDS = tile_scenes.TRAINABLE_KINDS
# models/tiles_lit.onnx, the reader's second network (vision.find.second_net): the same recipe with
# lighting and distance drawn over the training crops (--lit). A lamp's reflection over part of
# a small kingdom and a hard shadow left the first network nearly blind (2026-12-05).
LIT_SHARES = {"glare": 0.3,    # share of crops with a soft whitish patch (most of a small kingdom at most)
              "shadow": 0.25,  # share of crops with a straight-edged shadow across them
              "shrink": 0.2}   # share of crops cut from the photo shrunk 0.45-0.85 (a kingdom far away)
NO_LIGHTING = {"glare": 0.0, "shadow": 0.0, "shrink": 0.0}   # models/tiles.onnx


def build_model():
    """Encoder to 1/4 resolution with dilated convolutions (about two squares of context),
    decoded to 1/2 resolution with the 1/2-resolution features (sharp tile outlines)."""
    import torch
    import torch.nn as nn

    def conv(cin, cout, dil=1):
        return [nn.Conv2d(cin, cout, 3, padding=dil, dilation=dil, bias=False),
                nn.BatchNorm2d(cout), nn.ReLU(inplace=True)]

    class Net(nn.Module):
        def __init__(self):
            super().__init__()
            self.enc_half = nn.Sequential(*conv(3, 16), nn.MaxPool2d(2), *conv(16, 16))
            self.quarter = nn.Sequential(nn.MaxPool2d(2), *conv(16, 32), *conv(32, 32, 2),
                                         *conv(32, 32, 4), *conv(32, 32, 8))
            self.up = nn.ConvTranspose2d(32, 16, 2, stride=2)
            self.head = nn.Sequential(*conv(32, 16), nn.Conv2d(16, 1, 1))

        def forward(self, x):
            h = self.enc_half(x)
            return self.head(torch.cat([h, self.up(self.quarter(h))], 1))

    return Net()


def training_pairs(phone_photos, n_scenes: int, seed: int = 0, long_side: int = 400, boards=(),
                   real_share: float = REAL_SHARE, kinds=KINDS):
    """``(small_bgr, labels)`` pairs (labels 1 tile / 0 not / -1 undecided): generated scenes of
    drawn kingdoms (``real_share`` of the hard-table ones with one of the photographed ``boards``
    instead; tables drawn among ``kinds``) and the labelled phone photos, downscaled as the
    detector sees them."""
    from vision.lab.training.pixels import label_mask
    from vision.find.tilemap import downscale

    pairs = tile_scenes.mixed_training_scenes(n_scenes, seed, long_side, hard_share=HARD_SHARE,
                                              kinds=kinds, boards=boards, real_share=real_share)
    phone = []
    for p in phone_photos:
        small, s = downscale(cv2.imread(str(p.path)), long_side)
        phone.append((small, label_mask(p, small.shape[:2], s)))
    return pairs, phone


def _augment(img: np.ndarray, y: np.ndarray, rng: np.random.Generator):
    """A random CROP x CROP window (padded where the photo is smaller), turned and flipped,
    with colour, brightness and white-balance changes."""
    h, w = y.shape
    ph, pw = max(0, CROP - h), max(0, CROP - w)
    if ph or pw:
        img = cv2.copyMakeBorder(img, 0, ph, 0, pw, cv2.BORDER_REFLECT)
        y = cv2.copyMakeBorder(y, 0, ph, 0, pw, cv2.BORDER_CONSTANT, value=-1)
        h, w = y.shape
    y0, x0 = rng.integers(0, h - CROP + 1), rng.integers(0, w - CROP + 1)
    img, y = img[y0:y0 + CROP, x0:x0 + CROP], y[y0:y0 + CROP, x0:x0 + CROP]
    k = int(rng.integers(4))
    img, y = np.rot90(img, k), np.rot90(y, k)
    if rng.random() < 0.5:
        img, y = img[:, ::-1], y[:, ::-1]
    x = img.astype(np.float32)
    x = x * rng.uniform(0.85, 1.15, 3)[None, None, :] * rng.uniform(0.6, 1.3) + rng.uniform(-20, 20)
    if rng.random() < 0.3:
        x = cv2.GaussianBlur(x, (0, 0), rng.uniform(0.5, 1.5))
    x += rng.normal(0, rng.uniform(0, 6), x.shape)
    return np.clip(x, 0, 255).astype(np.uint8), np.ascontiguousarray(y)


def _shrink(img: np.ndarray, y: np.ndarray, rng: np.random.Generator):
    """The photo and its labels shrunk by a random 0.45-0.85 (a kingdom farther away); a
    label pixel shrunk from mixed ones is undecided (-1)."""
    f = float(rng.uniform(0.45, 0.85))
    h, w = y.shape
    size = (max(1, round(w * f)), max(1, round(h * f)))
    small = cv2.resize(img, size, interpolation=cv2.INTER_AREA)
    tile = cv2.resize((y == 1).astype(np.float32), size, interpolation=cv2.INTER_AREA)
    table = cv2.resize((y == 0).astype(np.float32), size, interpolation=cv2.INTER_AREA)
    out = np.full(small.shape[:2], -1, np.int8)
    out[tile > 0.99] = 1
    out[table > 0.99] = 0
    return small, out


def _lighting(img: np.ndarray, rng: np.random.Generator, glare: bool, shadow: bool) -> np.ndarray:
    """``img`` (a training crop) under a soft whitish patch of a lamp's reflection (``glare``)
    and a straight-edged shadow across it (``shadow``); the labels do not change."""
    h, w = img.shape[:2]
    x = img.astype(np.float32)
    if shadow:
        ang = rng.uniform(0, 2 * np.pi)
        n = np.array([np.cos(ang), np.sin(ang)])
        yy, xx = np.mgrid[0:h, 0:w].astype(np.float32)
        d = (xx - rng.uniform(0, w)) * n[0] + (yy - rng.uniform(0, h)) * n[1]
        m = 1 / (1 + np.exp(-d / rng.uniform(0.5, 4.0)))
        x *= (1 - rng.uniform(0.3, 0.65) * m)[..., None]
    if glare:
        g = np.zeros((h, w), np.float32)
        axes = (int(rng.uniform(0.06, 0.3) * w), int(rng.uniform(0.04, 0.2) * w))
        cv2.ellipse(g, (int(rng.uniform(0, w)), int(rng.uniform(0, h))), (max(1, axes[0]), max(1, axes[1])),
                    rng.uniform(0, 180), 0, 360, 1.0, -1)
        g = cv2.GaussianBlur(g, (0, 0), max(0.7, rng.uniform(0.02, 0.12) * max(axes)))[..., None]
        peak = rng.uniform(0.4, 0.9)
        colour = rng.uniform(225, 255) * rng.uniform(0.94, 1.0, 3)
        x = x * (1 - peak * g) + peak * g * colour[None, None, :]
    return np.clip(x, 0, 255).astype(np.uint8)


def _pixel_weights(y: np.ndarray, edge_weight: float) -> np.ndarray:
    """Loss weight of each pixel: 0 where undecided, ``edge_weight`` near a tile outline (the
    outline is what the quadrilateral is fitted to), 1 elsewhere."""
    w = (y >= 0).astype(np.float32)
    k = np.ones((EDGE_BAND, EDGE_BAND), np.uint8)
    near = (cv2.dilate((y == 1).astype(np.uint8), k) > 0) & (cv2.dilate((y == 0).astype(np.uint8), k) > 0)
    w[near & (y >= 0)] = edge_weight
    return w


def fit(pairs, phone, *, steps: int = STEPS, batch: int = BATCH, phone_share: float = PHONE_SHARE,
        edge_weight: float = EDGE_WEIGHT, seed: int = 0, log=None, shares: dict | None = None):
    """Train the network; returns the torch model in eval mode. ``shares``: of the crops drawn
    with glare, shadow and shrunk (``LIT_SHARES``; none by default, and then no random number
    is drawn for them, so the recipe of ``models/tiles.onnx`` is unchanged)."""
    import torch
    import torch.nn.functional as F

    shares = {**NO_LIGHTING, **(shares or {})}
    torch.set_num_threads(2)
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    model = build_model()
    opt = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=1e-4)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=3e-3, total_steps=steps)
    t0, tot = time.time(), 0.0
    model.train()
    for step in range(steps):
        xs, ys = [], []
        for _ in range(batch):
            src = phone if phone and rng.random() < phone_share else pairs
            img, y = src[int(rng.integers(len(src)))]
            if shares["shrink"] > 0 and rng.random() < shares["shrink"]:
                img, y = _shrink(img, y, rng)
            a, b = _augment(img, y, rng)
            if shares["glare"] > 0 or shares["shadow"] > 0:
                glare, shadow = rng.random() < shares["glare"], rng.random() < shares["shadow"]
                if glare or shadow:
                    a = _lighting(a, rng, glare, shadow)
            xs.append(a)
            ys.append(b)
        x = torch.from_numpy(preprocess(np.stack(xs)))
        y = torch.from_numpy(np.stack(ys).astype(np.float32))[:, None]
        z = F.interpolate(model(x), size=y.shape[-2:], mode="bilinear", align_corners=False)
        weight = torch.from_numpy(np.stack([_pixel_weights(b, edge_weight) for b in ys]))[:, None]
        loss = (F.binary_cross_entropy_with_logits(z, y.clamp(min=0), reduction="none") * weight
                ).sum() / weight.sum().clamp(min=1)
        opt.zero_grad()
        loss.backward()
        opt.step()
        sched.step()
        tot += float(loss.detach())
        if log and (step + 1) % 100 == 0:
            log(f"step {step + 1}/{steps}: loss {tot / 100:.4f} ({time.time() - t0:.0f} s)")
            tot = 0.0
    model.eval()
    return model


def export(model, path: Path) -> float:
    """Write the ONNX file; returns the largest difference between torch and OpenCV outputs."""
    import torch

    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    dummy = torch.zeros(1, 3, 96, 128)
    torch.onnx.export(model, dummy, str(path), input_names=["image"], output_names=["logits"],
                      dynamic_axes={"image": {2: "h", 3: "w"}, "logits": {2: "h4", 3: "w4"}},
                      opset_version=13, dynamo=False)
    x = np.random.default_rng(0).integers(0, 255, (1, 300, 400, 3)).astype(np.uint8)
    with torch.no_grad():
        ref = model(torch.from_numpy(preprocess(x))).numpy()
    net = cv2.dnn.readNetFromONNX(str(path))
    net.setInput(preprocess(x))
    return float(np.abs(net.forward() - ref).max())


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(prog="python3 -m vision.lab.training.tiles",
                                 description="Train the tile-likelihood network of the detector.")
    ap.add_argument("--out", type=Path, required=True, help="ONNX file to write")
    ap.add_argument("--datasets", type=Path, default=None,
                    help="datasets folder (default: ../shared/datasets)")
    ap.add_argument("--scenes", type=int, default=SCENES, help="generated scenes to train on")
    ap.add_argument("--steps", type=int, default=STEPS)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--exclude", default="",
                    help="comma-separated kingdom groups to leave out (e.g. phone:KT1,aau:12), "
                         "for cross-validation")
    ap.add_argument("--real-share", type=float, default=REAL_SHARE,
                    help="share of the hard-table scenes with a photographed AAU dev board")
    ap.add_argument("--kinds", default=",".join(KINDS),
                    help="table kinds of the hard-table scenes, comma-separated (default "
                         f"{','.join(KINDS)}; never {','.join(tile_scenes.HELD_OUT_KINDS)} "
                         "or the kinds kept unseen)")
    ap.add_argument("--lit", action="store_true",
                    help="draw glare, shadows and far-away kingdoms over the training crops "
                         "(the recipe of models/tiles_lit.onnx, the reader's second network)")
    args = ap.parse_args(argv)
    from vision.lab.datasets import load_aau, load_phone
    from vision.lab.scenes.synth import aau_boards

    if not 0.0 <= args.real_share <= 1.0:
        print(f"error: --real-share is a fraction, 0 to 1, got {args.real_share}", file=sys.stderr)
        return 2
    try:
        kinds = tile_scenes.training_kinds(args.kinds)
    except ValueError as exc:
        print(f"error: --kinds: {exc}", file=sys.stderr)
        return 2
    try:
        photos = load_phone(args.datasets)
        aau = load_aau(args.datasets)
    except (FileNotFoundError, OSError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 1
    skip = {k for k in args.exclude.split(",") if k}
    photos = [p for p in photos if p.group not in skip]
    boards = aau_boards(photos=[p for p in aau if p.group not in skip])
    t0 = time.time()
    pairs, phone = training_pairs(photos, args.scenes, seed=args.seed, boards=boards,
                                  real_share=args.real_share, kinds=kinds)
    print(f"{len(pairs)} scenes ({len(boards)} AAU boards), {len(phone)} phone photos "
          f"({time.time() - t0:.0f} s)", flush=True)
    shares = LIT_SHARES if args.lit else NO_LIGHTING
    model = fit(pairs, phone, steps=args.steps, seed=args.seed, shares=shares,
                log=lambda m: print(m, flush=True))
    diff = export(model, args.out)
    meta = {"scenes": args.scenes, "scene_seed": args.seed, "steps": args.steps,
            "batch": BATCH, "crop": CROP, "phone_share": PHONE_SHARE, "edge_weight": EDGE_WEIGHT,
            "edge_band": EDGE_BAND, "hard_share": HARD_SHARE, "glare_share": shares["glare"],
            "shadow_share": shares["shadow"], "shrink_share": shares["shrink"],
            "hard_seeds_from": tile_scenes.hard_seeds_from(args.scenes, args.seed, HARD_SHARE),
            "hard_kinds": list(kinds), "real_share": args.real_share,
            "aau_boards": sorted(b["name"] for b in boards),
            "phone_photos": sorted(p.name for p in photos), "onnx_vs_torch_max_abs_diff": diff}
    args.out.with_suffix(".json").write_text(json.dumps(meta, indent=1) + "\n")
    print(f"wrote {args.out} ({args.out.stat().st_size / 1e3:.0f} kB); opencv vs torch {diff:.2e}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
