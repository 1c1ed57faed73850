"""``python -m ddppm``: the same as the console script ``ddppm`` (:func:`ddppm.advise.main`)."""

from ddppm.advise import main

raise SystemExit(main())
