"""The small-model strategy: the small profile, sampled line repairs, the repair loop, context up front."""
