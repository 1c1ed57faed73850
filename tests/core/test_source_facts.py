"""The facts behind code hashes: parsed, then remembered on disk, with a hit equal to a parse."""

from __future__ import annotations

from ddppm.core import source_facts as sf
from ddppm.core.provenance import PACKAGE_DIR, _module_name


def _package_files() -> list[tuple[bytes, str, bool]]:
    return [(p.read_bytes(), _module_name(p), p.name == "__init__.py") for p in sorted(PACKAGE_DIR.rglob("*.py"))]


def test_relative_imports_data_names_and_discovery_by_hand() -> None:
    source = b"""
from . import sibling
from ..other import thing
import ddppm.core.io as io
DISCOVERED_PACKAGE = "ddppm.methods"
def f():
    from .lazy import heavy  # a function-local import counts too
    return ["spec.yaml", "x.schema.yaml", "dir/no.json", "table.json", 3]
"""
    facts = sf.parse_facts(source, "ddppm.pkg.sub.mod", is_package=False)
    assert facts.imports == {
        "ddppm.pkg.sub", "ddppm.pkg.sub.sibling", "ddppm.pkg.other", "ddppm.pkg.other.thing", "ddppm.core.io",
        "ddppm.pkg.sub.lazy", "ddppm.pkg.sub.lazy.heavy",
    }  # fmt: skip
    assert facts.data_names == {"spec.yaml", "table.json"}
    assert facts.discovered == "ddppm.methods"
    as_package = sf.parse_facts(b"from . import sibling\n", "ddppm.pkg.sub", is_package=True)
    assert as_package.imports == {"ddppm.pkg.sub", "ddppm.pkg.sub.sibling"}
    assert as_package.discovered is None


def test_a_remembered_fact_equals_a_parse_for_every_module(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("DDPPM_CACHE_DIR", str(tmp_path))
    files = _package_files()
    cold = [sf.source_facts(*f) for f in files]
    assert len(list(tmp_path.glob("*.json"))) == len({f for f in files}), "one entry per distinct file"
    assert not list(tmp_path.glob("*.tmp")), "no temporary file left behind"

    def no_parse(*_args):
        raise AssertionError("a remembered fact was parsed again")

    monkeypatch.setattr(sf, "parse_facts", no_parse)
    warm = [sf.source_facts(*f) for f in files]
    monkeypatch.undo()
    assert warm == cold == [sf.parse_facts(*f) for f in files]
    assert any(f.discovered for f in warm) and any(f.data_names for f in warm)


def test_a_corrupt_entry_is_parsed_again_and_an_unwritable_cache_costs_only_time(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("DDPPM_CACHE_DIR", str(tmp_path))
    source, module, is_package = _package_files()[0]
    expected = sf.parse_facts(source, module, is_package)
    sf.source_facts(source, module, is_package)
    (entry,) = tmp_path.glob("*.json")
    entry.write_text('{"imports": ["ddppm.wrong"')  # cut short, as by a full disk
    assert sf.source_facts(source, module, is_package) == expected
    assert sf.source_facts(source, module, is_package) == expected  # and the rewritten entry reads back

    blocked = tmp_path / "file-not-dir"
    blocked.write_text("")
    monkeypatch.setenv("DDPPM_CACHE_DIR", str(blocked / "cache"))
    assert sf.source_facts(source, module, is_package) == expected


def test_the_key_changes_with_the_module_name(tmp_path, monkeypatch) -> None:
    """The same bytes under two names resolve relative imports differently: two entries, two answers."""
    monkeypatch.setenv("DDPPM_CACHE_DIR", str(tmp_path))
    source = b"from . import x\n"
    a = sf.source_facts(source, "ddppm.a.mod", False)
    b = sf.source_facts(source, "ddppm.b.mod", False)
    assert a.imports == {"ddppm.a", "ddppm.a.x"} and b.imports == {"ddppm.b", "ddppm.b.x"}
    assert len(list(tmp_path.glob("*.json"))) == 2
