import numpy as np
import pytest

from vision.geometry import warp_board
from vision.read.crops import cell_crops, crop_size, image_corners, photo_crops


def painted_board(rows, cols, cell):
    """A board whose every cell is one flat, distinct colour."""
    colours = np.array([[(10 * r + 3, 20 * c + 7, 5 * (r + c) + 1) for c in range(cols)]
                        for r in range(rows)], dtype=np.uint8)
    board = np.repeat(np.repeat(colours, cell, axis=0), cell, axis=1)
    return board, colours


def test_crops_hold_their_cell_colour():
    board, colours = painted_board(3, 4, 20)
    crops = cell_crops(board, 3, 4, 20, crop_margin=5)
    assert crops.shape == (12, 30, 30, 3)
    for r in range(3):
        for c in range(4):
            inner = crops[r * 4 + c][5:25, 5:25]
            assert (inner == colours[r, c]).all()


def test_margin_sees_the_neighbours_and_replicates_outside():
    board, colours = painted_board(2, 2, 10)
    crops = cell_crops(board, 2, 2, 10, crop_margin=3)
    top_left = crops[0]
    assert (top_left[0, 0] == colours[0, 0]).all()          # replicated border
    assert (top_left[5, -1] == colours[0, 1]).all()         # right neighbour in the margin
    assert (top_left[-1, 5] == colours[1, 0]).all()         # bottom neighbour in the margin


def test_board_margin_is_skipped():
    board, colours = painted_board(2, 3, 16)
    framed = np.pad(board, ((7, 7), (7, 7), (0, 0)), constant_values=255)
    crops = cell_crops(framed, 2, 3, 16, board_margin=7, crop_margin=0)
    for i, crop in enumerate(crops):
        assert (crop == colours[i // 3, i % 3]).all()


def test_photo_crops_through_warp_board_matches_direct():
    board, colours = painted_board(5, 5, 40)
    crops = photo_crops(board, image_corners(board), 5, 5, 20, board_margin=4, crop_margin=2)
    assert crops.shape == (25, crop_size(20, 2), crop_size(20, 2), 3)
    for i, crop in enumerate(crops):
        assert np.abs(crop[6:18, 6:18].astype(int) - colours[i // 5, i % 5]).max() <= 1
    warped, _ = warp_board(board, image_corners(board), 5, 5, 20, 4)
    assert warped.shape == (108, 108, 3)


def test_bad_geometry_and_shapes_are_refused():
    board, _ = painted_board(2, 2, 10)
    with pytest.raises(ValueError):
        cell_crops(board, 3, 2, 10)                    # board too small
    with pytest.raises(ValueError):
        cell_crops(board, 0, 2, 10)


def test_a_board_is_warped_once_a_read_and_only_for_its_photo():
    """Within a read (read_once) the same window of the photo is warped once (the same
    read-only board); another photo's window, another window, or the same one after the
    read, is warped anew, as warp_board warps it."""
    from vision.read.crops import read_once, rectify

    board, _ = painted_board(5, 5, 40)
    other = board[::-1].copy()
    corners = image_corners(board)
    alone = warp_board(board, corners, 5, 5, 20, 4)[0]
    with read_once(board):
        first = rectify(board, corners, 5, 5, 20, 4)
        assert rectify(board, corners.astype(np.float64), 5, 5, 20, 4)[0] is first[0]
        assert not first[0].flags.writeable
        assert rectify(board, corners, 5, 5, 20, 2)[0] is not first[0]
        theirs = rectify(other, corners, 5, 5, 20, 4)[0]
        assert np.array_equal(theirs, warp_board(other, corners, 5, 5, 20, 4)[0])
        assert not np.array_equal(theirs, first[0])
    assert np.array_equal(first[0], alone)
    after = rectify(board, corners, 5, 5, 20, 4)[0]
    assert after is not first[0] and after.flags.writeable
