"""What reads the claims: the status of every numbered statement and the proof chains that show it.

:mod:`fedtheory.coverage.statements` gives each statement of the papers' inventories (:mod:`fedtheory.papers`, data
below the claims) one status from the claims that cite it (``fedtheory coverage``); :mod:`fedtheory.coverage.chain`
walks a theorem's proof chain to the first lemma that fails (``fedtheory verify --explain CLAIM``), showing on every
link the status the first module gives.
"""
