"""ddppm.config's reference page (``config/README.md``): every key of the assembled schema is on it, with ``$ref``
sections expanded, its default and its description."""

from __future__ import annotations

from ddppm.config import _resolve, config_reference, config_schema, main


def _keys(name: str, node: dict, definitions: dict) -> list[str]:
    node = _resolve(node, definitions)
    keys = [name]
    for key, child in node.get("properties", {}).items():
        keys += _keys(f"{name}.{key}", child, definitions)
    if isinstance(node.get("additionalProperties"), dict):
        keys += _keys(f"{name}.<name>", node["additionalProperties"], definitions)
    return keys


def test_every_key_of_the_schema_is_documented():
    schema = config_schema()
    page = config_reference()
    keys = [k for name, node in schema["properties"].items() for k in _keys(name, node, schema["definitions"])]
    assert len(keys) > 200
    missing = [key for key in keys if f"| `{key}` |" not in page]
    assert not missing, missing
    # a $ref section is expanded where it is used, and each required key is marked
    assert "| `dataset_options.<name>.network.topology` |" in page
    assert "## `datasets` (required)" in page and "## `results_dir`\n" in page


def test_a_row_has_the_type_default_and_description():
    page = config_reference()
    (row,) = [line for line in page.splitlines() if line.startswith("| `montecarlo.runs` |")]
    assert row == "| `montecarlo.runs` | integer, ≥ 2 | `200` | runs per (dataset, method, ε) |"
    assert "| `common.peers.python` | string |  | the peers' Python interpreter" in page


def test_main_writes_the_page(tmp_path, capsys):
    assert main([str(tmp_path / "README.md")]) == 0
    assert (tmp_path / "README.md").read_text(encoding="utf-8") == config_reference()
    assert "wrote" in capsys.readouterr().out
