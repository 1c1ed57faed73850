"""The common-task experiment's job parameters (ddppm.experiments.common): a data set's runs read only what is
theirs, so adding, removing or reordering another data set reruns none of them."""

from __future__ import annotations

import copy

import yaml

from ddppm.common_task.settings import setting_config_keys
from ddppm.config import validate_config
from ddppm.experiments.common import dataset_job_params
from tests.conftest import REPO

KEYS = ("common.ranks", "common.iterations", "common.runs", "common.seed")


def test_another_data_set_changes_no_runs_params() -> None:
    config = validate_config(yaml.safe_load((REPO / "config.yaml").read_text()))
    other = copy.deepcopy(config)
    other["common"]["datasets"] = ["wine", "digits"]  # fewer sets, another order
    other["delta_limits"]["diabetes"] = [0.5] * len(other["epsilons"])  # another set's journal limits
    for setting in ("standard", "prepared_rows", "oracle_bounds", "journal_delta_limits"):
        keys = (*KEYS, *setting_config_keys(setting))
        assert dataset_job_params(config, "wine", keys) == dataset_job_params(other, "wine", keys)
    changed = copy.deepcopy(config)
    changed["delta_limits"]["wine"] = [0.5] * len(changed["epsilons"])  # its own limits: its runs rerun
    keys = (*KEYS, *setting_config_keys("journal_delta_limits"))
    assert dataset_job_params(config, "wine", keys) != dataset_job_params(changed, "wine", keys)
