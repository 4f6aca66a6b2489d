"""A dated release the catalog lacks takes the undated entry's shape, never its length: Qwen3-30B-A3B-Instruct-2507
keeps Qwen3-30B-A3B's architecture but has 262,144 tokens of context, not 40,960."""

from gpustack_guard.adapters.model_sources.catalog import catalog_facts, catalog_key, release_of


def test_the_release_date_stays_in_the_key():
    assert catalog_key("Qwen/Qwen3-30B-A3B-Instruct-2507") == "qwen3-30b-a3b-2507"
    assert release_of("qwen3-30b-a3b-2507") == ("qwen3-30b-a3b", "2507")
    assert release_of("qwen3-30b-a3b") == ("qwen3-30b-a3b", None)
    assert catalog_key("meta-llama/Llama-3.3-70B-Instruct") == "llama-3.3-70b"


def test_a_missing_release_gets_the_shape_without_the_length():
    base = catalog_facts("Qwen/Qwen3-30B-A3B")
    dated = catalog_facts("Qwen/Qwen3-30B-A3B-Instruct-2507")
    assert base is not None and dated is not None
    assert base.max_position_embeddings == 40_960 and dated.max_position_embeddings is None
    assert dated.length_config is None
    assert (dated.num_hidden_layers, dated.num_experts, dated.kv_heads) == (base.num_hidden_layers, base.num_experts,
                                                                             base.kv_heads)
    assert dated.source == "catalog:Qwen/Qwen3-30B-A3B (shape only: release 2507 is not in the catalog)"


def test_no_undated_entry_no_facts():
    assert catalog_facts("acme/unknown-model-2507") is None
