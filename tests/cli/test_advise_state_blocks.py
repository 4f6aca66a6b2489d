"""gsg advise never proposes a hybrid whose state blocks are below its --max-num-seqs (GSG056): the first round's
1,024 sequences on one H100 are refused by vLLM 0.20+, so the sequences are capped at the blocks and tuned on, as
for the sampler warm-up (GSG043); without that the candidate was dropped and advise refused the model."""

import json

import yaml


def test_a_candidate_above_its_state_blocks_is_tuned_to_a_start(gsg, tmp_path):
    workload = tmp_path / "many.yaml"
    workload.write_text(yaml.safe_dump({"name": "many", "prompt_tokens": {"p50": 100, "p95": 100, "p99": 100},
                                        "output_tokens": {"p50": 50, "p95": 50, "p99": 50},
                                        "concurrency": 1024, "pattern": "steady"}))
    result = gsg("advise", "-o", "json", "-m", "Qwen/Qwen3.6-27B", "--gpus", "1", "--gpu-memory", "81559MiB",
                 "--backend-version", "0.28.0", "-w", str(workload))
    assert result.code == 0, result.err
    deployment = json.loads(result.out)["options"][0]["deployments"][0]
    assert deployment["backend_parameters"][:3] == ["--gpu-memory-utilization=0.94", "--max-model-len=160",
                                                    "--max-num-seqs=67"]
    assert (deployment["verdict"], deployment["validate"]) == ("fits", [])
    x = deployment["estimate"]["extra"]
    assert (x["state_blocks"], x["state_blocks_checked"], x["state_blocks_refused"]) == (444, True, False)
