"""Scale studies: the decentralised setting as agents, topology and consensus grow (docs/studies.md).

:mod:`ddppm.studies.tasks` builds the tasks (the spiked rows over m agents on a topology, Theorem 3's consensus
term); :mod:`ddppm.studies.run` runs each study through the common task's runner and summarises it;
:mod:`ddppm.studies.findings` states what each found. Target ``snakemake all_studies`` (not in the default run).
"""
