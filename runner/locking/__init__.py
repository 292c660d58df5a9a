"""The lock's writers: the commands that change what a sweep reads from its lock file.

- `step`: a search's one step (`lock`: a drawn sample's points; `propose`: an adaptive search's
  round, a successive halving's rung), checked with the manifest before the lock is written;
- `proposing`: that step over every manifest named, as data for the commands;
- `seeding`: a warm start's prior points, from the sweeps its `seed_from` names;
- `clusters`: a cluster selector resolved into the lock (`lock`).
"""
