"""Rule montecarlo_chunk: one chunk of the Monte-Carlo runs of one (dataset, method, ε)."""

from ddppm.core.io import read_parquet, write_parquet
from ddppm.pipeline.montecarlo import chunk_indices, montecarlo_runs
from ddppm.pipeline.steps import problem_from_files, setup_logging

log = setup_logging(snakemake.log[0])
cfg = snakemake.params.cfg
wc = snakemake.wildcards
mc = cfg["montecarlo"]
indices = chunk_indices(int(mc["runs"]), int(wc.chunks), int(wc.chunk))
problem = problem_from_files(snakemake.input.data, snakemake.input.partition, snakemake.input.network)
params, _ = read_parquet(snakemake.input.params)
log.info(
    "%s %s eps=%s chunk %s: %d runs (%d..%d)",
    wc.dataset,
    wc.method,
    wc.eps,
    wc.chunk,
    len(indices),
    indices.min(),
    indices.max(),
)
runs = montecarlo_runs(
    problem, wc.method, float(wc.eps), params, indices, int(mc["seed"]), wc.dataset, cfg["methods"][wc.method]
)
for (model, feasible), group in runs.groupby(["threat_model", "feasible"]):
    if group["error"].notna().any():
        note = "" if feasible else f" (achieved δ {group['delta'].iloc[0]:.3g} exceeds the limit: marked infeasible)"
        log.info("threat model %s: mean error %.4g over %d runs%s", model, group["error"].mean(), len(group), note)
    else:
        log.info(
            "threat model %s: infeasible, no parameters met δ ≤ %.3g, so no runs", model, group["delta_limit"].iloc[0]
        )
write_parquet(
    runs, snakemake.output[0], {"config_hash": cfg["config_hash"], "seed": int(mc["seed"]), "runs": indices.tolist()}
)
