"""The model's population quantities: task covariances, prompts, Lemma 1 moments, the exact Gamma error."""
