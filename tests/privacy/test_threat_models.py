"""The one table of threat models (ddppm.privacy.threat_models): the schema, the journal method and the workshop
experiment all read it, and a threat model defined in the config works in each of them."""

from __future__ import annotations

import copy

import pytest
import yaml

from ddppm.core.errors import ConfigError
from ddppm.privacy.threat_models import BUILT_IN, ThreatModel, resolve, threat_model_table
from tests.conftest import REPO

MINE = {"view": "network", "accounting": "chernoff", "adjacency": "worst"}


def _config(**overrides) -> dict:
    from ddppm.config import validate_config

    config = yaml.safe_load((REPO / "config.yaml").read_text())
    config.update(overrides)
    return validate_config(copy.deepcopy(config))


def test_built_in_table_is_the_schemas_default_and_the_methods():
    from ddppm.accounting.settings import threat_model
    from ddppm.config import config_schema
    from ddppm.methods.ddppm.steps import THREAT_MODELS

    as_dicts = {name: tm.as_dict() for name, tm in BUILT_IN.items()}
    assert config_schema()["properties"]["threat_models"]["default"] == as_dicts == THREAT_MODELS
    assert threat_model("sound") == {"view": "network", "accounting": "exact", "adjacency": "worst"}
    assert BUILT_IN["sound"].delta_is == "at least" and BUILT_IN["paper"].delta_is != "at least"


def test_a_config_threat_model_keeps_the_built_in_ones():
    config = _config(threat_models={"mine": MINE})
    assert config["threat_models"]["mine"] == MINE
    assert set(BUILT_IN) <= set(config["threat_models"])
    assert threat_model_table(config["threat_models"])["mine"] == ThreatModel(**MINE)


def test_the_workshop_experiment_accepts_a_config_threat_model_and_names_the_key_otherwise():
    workshop = {"threat_models": ["paper", "mine"]}
    config = _config(threat_models={"mine": MINE}, workshop=workshop)
    assert config["workshop"]["threat_models"] == ["paper", "mine"]
    with pytest.raises(ConfigError, match=r"workshop\.threat_models.*top-level `threat_models`"):
        _config(workshop=workshop)


def test_bad_threat_models_name_the_key():
    with pytest.raises(ConfigError, match=r"methods\.ddppm\.threat_models: unknown threat model 'nope'"):
        resolve("nope", key="methods.ddppm.threat_models")
    with pytest.raises(ConfigError, match=r"threat_models\.<name>\.view: unknown 'everyone'"):
        ThreatModel("everyone", "exact", "worst")
    with pytest.raises(ConfigError, match="threat_models"):
        _config(threat_models={"mine": {**MINE, "accounting": "guess"}})
