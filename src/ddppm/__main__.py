"""``python -m ddppm``: the same as the console script ``ddppm`` (:func:`ddppm.cli.main`)."""

from ddppm.cli import main

raise SystemExit(main())
