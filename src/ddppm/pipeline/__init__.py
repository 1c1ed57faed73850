"""Workflow glue: configuration in, tables out. The Snakemake scripts are thin wrappers around these."""
