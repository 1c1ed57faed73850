"""Rule ddppm_delta_curve: δ and error as functions of T at fixed ε (paper Fig. 3), for one threat model."""

from ddppm.core.io import read_parquet, write_parquet
from ddppm.methods.ddppm.steps import delta_curve
from ddppm.pipeline.steps import problem_from_files, setup_logging

log = setup_logging(snakemake.log[0])
cfg = snakemake.params.cfg
wc = snakemake.wildcards
problem = problem_from_files(snakemake.input.data, snakemake.input.partition, snakemake.input.network)
calibration, cal_meta = read_parquet(snakemake.input.calibration)
candidates, _ = read_parquet(snakemake.input.candidates)
floor, _ = read_parquet(snakemake.input.floor)
options = cfg["methods"]["ddppm"]
model = cfg["threat_models"][wc.threat_model]
curve, meta = delta_curve(
    problem,
    calibration,
    candidates,
    cfg["epsilons"],
    cfg["delta_limits"],
    options,
    model,
    wc.dataset,
    int(options["delta_curve"]["seed"]),
    cal_meta["neighbours"] if model["adjacency"] == "worst" else None,
    cal_meta.get("screen_pairs"),
    floor,
)
meta["config_hash"] = cfg["config_hash"]
log.info(
    "%s, threat model %s, parameters: %s\n%s", wc.dataset, wc.threat_model, meta["params_source"], curve.to_string()
)
write_parquet(curve, snakemake.output[0], meta)
