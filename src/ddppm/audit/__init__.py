"""The privacy audit: a lower bound on ε from what an observer sees, for a mechanism as implemented
(docs/audit.md). A passed audit is evidence, never proof: "consistent" means the attack did not refute the claim."""
