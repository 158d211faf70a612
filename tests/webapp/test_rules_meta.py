"""What the pages are sent about each rule set (``rules_meta``, ``GET /api/rules``) carries the
game's words from the engine, so no page script keeps its own copy: terrain keys, the names a
piece is chosen from, The Court's tokens. Fields are only ever added (the JSON API)."""
from __future__ import annotations

import engine
from engine.kingdom import CAVEMEN, LETTERS, RESOURCES, TOKEN_OF, WARRIORS

# the fields the API sent before these were added, unchanged
EARLIER = {"name", "bonuses", "terrains", "start", "title", "pieces", "piece_options"}


def test_each_rule_set_is_sent_the_engines_words(client):
    metas = {m["name"]: m for m in client.get("/api/rules").get_json()["rules"]}
    assert set(metas) == set(engine.rule_names())
    for name, meta in metas.items():
        assert EARLIER <= set(meta)
        # one key per terrain of the rule set that has one, as the text grid writes it
        assert meta["letters"] == {t: k for k, t in LETTERS.items() if t in meta["terrains"]}
        pieces = set(meta["pieces"]["cell"]) | set(meta["pieces"]["kingdom"])
        assert set(meta["piece_values"]) <= pieces
    tribe = metas["origins-tribe"]["piece_values"]
    assert tribe == {"resource": list(RESOURCES), "caveman": list(CAVEMEN),
                     "warrior": [[name, power] for name, power in WARRIORS.items()]}
    assert metas["origins-totem"]["piece_values"]["totems"] == list(RESOURCES)
    # The Court's token is a flag (piece_options), its kind follows the terrain
    assert metas["the-court"]["tokens"] == TOKEN_OF and "resource" not in \
        metas["the-court"]["piece_values"]
    assert all("tokens" not in m for n, m in metas.items() if n != "the-court")
    assert metas["kingdomino"]["letters"] == {"field": "F", "forest": "W", "lake": "L",
                                              "grassland": "G", "swamp": "S", "mine": "M",
                                              "castle": "C", "empty": "."}
