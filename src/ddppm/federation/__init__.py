"""Parties that never pool their records: the release across processes (docs/federation.md)."""
