"""The common task: every private PCA method on the same data, metric, adjacency and privacy standard.

Issue 20 of the project ("which method should a user pick?"). The pieces, one concern per module:

* :mod:`~ddppm.common_task.task`: the task (rows in the unit ball split over m agents, the top-k principal
  directions of ``XᵀX``) and its metrics (subspace error, captured variance, the chance level);
* :mod:`~ddppm.common_task.adjacency`: the one adjacency (replace one row by any row of the unit ball; the journal's
  ``‖x − x′‖ ≤ 1`` beside it) and the L2 sensitivity of each release the methods make under it;
* :mod:`~ddppm.common_task.certified`: the certified δ of a composition of Gaussian mechanisms (exact, for every
  neighbour), the privacy standard of Definition 1 (the hockey-stick δ).
"""
