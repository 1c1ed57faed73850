"""Privacy of Gaussian releases, independent of any method: Rényi divergences, privacy-loss tails, mechanisms."""
