"""gsg advise, the pure part: workloads in, backend flags out, every candidate judged by the validate pipeline."""
