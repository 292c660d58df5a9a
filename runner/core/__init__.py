"""The foundation every stage stands on: the frozen nouns, values, keys and the parameter space, errors, files, retries."""
