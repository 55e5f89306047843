"""Run profiles (the interface the loop calls; full and small) and the small-model strategy they use."""
