"""The goldens ROCm/ATOM's KV-pool refactor (pull request #2147) measured, from public configs.

Each golden is checked at the tp, KV dtype and scheduler block it was measured at there, and
carries its arithmetic written out from the config's own fields, so a golden that comes out
right for the wrong reason (a padded row, a dropped layer, a second reading of a width) fails on
the decomposition rather than hiding in a sum. None of the configs was adjusted to make a number
come out; where a golden needs a fact no public config states, the test says which.
"""

from __future__ import annotations

import pytest
import torch

from atom.engine_config import EngineConfig
from atom.models.hf_config import ConfigFieldError
from atom.models.modules import LinearAttention
from atom.models.registry import load_model_config
from atom.models.skeleton import build_modules
from atom.pool_layout import EntryClass
from atom.runner.model_runner import ModelRunner


def _runner(name, draft=None, **engine):
    draft_config = load_model_config(draft) if draft else None
    return ModelRunner(load_model_config(name), EngineConfig(**engine), draft_config=draft_config)


# -- Qwen3.5-27B --------------------------------------------------------------------------------


def test_qwen35_27b_goldens_tp2_fp8_block16():
    """ROCm/ATOM pull request #2147: "Qwen3.5-27B tp2 ... sizing identical at
    `entry_bytes=266240`" and "kv 877755 x 266240, state 256 x 39223296 ... and 48 + 16 rows" --
    tp 2; fp8 KV with one fp32 scale per token per head and the 16-token MHA block are what the
    page golden implies (qwen3.5-27b.json `_notes`). Every count below is the public config's."""
    runner = _runner("qwen3.5-27b", tp_size=2, kv_dtype="fp8")
    cfg = runner.text_config
    layers = cfg.require_int("num_hidden_layers")
    full = layers // cfg.require_int("full_attention_interval")
    linear = layers - full
    kv_heads = cfg.require_int("num_key_value_heads") // 2
    head_dim = cfg.require_int("head_dim")
    k_heads = cfg.require_int("linear_num_key_heads") // 2
    v_heads = cfg.require_int("linear_num_value_heads") // 2
    k_dim, v_dim = cfg.require_int("linear_key_head_dim"), cfg.require_int("linear_value_head_dim")
    kernel = cfg.require_int("linear_conv_kernel_dim")
    assert (layers, full, linear, kv_heads, head_dim) == (64, 16, 48, 2, 256)
    assert (k_heads, v_heads, k_dim, v_dim, kernel) == (8, 24, 128, 128, 4)
    block = runner.builder.block_size
    assert block == 16
    # PAGE: K and V 16 rows x 16 tokens x 2 heads x 256 x 1 B = 131072 each, and their fp32
    # scales 16 x 16 x 2 x 4 B = 2048 each.
    page = 2 * full * block * kv_heads * head_dim * 1 + 2 * full * block * kv_heads * 4
    # STATE, per request and GDN row: the conv window (kernel - 1) x (q + k + v widths) x 2 B =
    # 3 x 5120 x 2 = 30720, and the recurrent state 24 x 128 x 128 x 2 B = 786432, both bf16.
    conv = (kernel - 1) * (2 * k_heads * k_dim + v_heads * v_dim) * 2
    ssm = v_heads * k_dim * v_dim * 2
    state = linear * (conv + ssm)
    assert (conv, ssm, page, state) == (30720, 786432, 266240, 39223296)
    assert runner.entry_bytes() == {EntryClass.PAGE: 266240, EntryClass.STATE: 39223296}
    assert runner.row_counts() == {"linear_state": 48, "h2d256": 16}


def test_qwen35_27b_state_golden_is_the_bf16_price_not_the_configs_fp32_recurrent_state():
    """The public config says `mamba_ssm_dtype: float32`; 39223296 is the price of a bf16
    recurrent state, so the engine that measured it (and this one) prices the state in
    `torch_dtype`. Priced at float32 the golden would be 48 x (30720 + 2 x 786432) = 76972032."""
    runner = _runner("qwen3.5-27b", tp_size=2, kv_dtype="fp8")
    assert runner.text_config.get("mamba_ssm_dtype") == "float32"
    assert 48 * (30720 + 2 * 786432) == 76972032
    assert runner.entry_bytes()[EntryClass.STATE] == 39223296 != 76972032
    gdn = [m for m in runner.skeleton.modules if isinstance(m, LinearAttention)]
    assert len(gdn) == 48 and {m.dtype for m in gdn} == {torch.bfloat16}


# -- Kimi-K3 -----------------------------------------------------------------------------------


def test_kimi_k3_entry_bytes_golden_tp8_fp8_block128():
    """Record: "Kimi-K3 `entry_bytes` is 1769472 on this commit and on HEAD" -- tp 8, fp8 KV,
    --block-size 128 (ROCm/ATOM recipes/Kimi-K3.md)."""
    runner = _runner("kimi-k3", tp_size=8, kv_dtype="fp8", scheduler_block_size=128)
    text = runner.text_config
    full_attn = len(text.require("linear_attn_config")["full_attn_layers"])
    latent = text.require_int("kv_lora_rank") + text.require_int("qk_rope_head_dim")
    # 24 MLA rows x 128 tokens x (512 + 64) x 1 B (fp8); no indexer bytes: the config has none.
    assert (full_attn, latent) == (24, 576)
    assert full_attn * 128 * latent * 1 == 1769472
    assert runner.entry_bytes()[EntryClass.PAGE] == 1769472
    assert runner.row_counts() == {"mla": 24, "linear_state": 69}
    (pool,) = runner.builder.paged_pools.values()
    assert pool.index is None and pool.padding_bytes == 0


def test_kimi_k3_declares_nope_but_no_padded_width_so_the_row_is_the_latent():
    modules = build_modules(load_model_config("kimi-k3")).modules
    mla = [m for m in modules if m.caches().startswith("mla")]
    assert len(mla) == 24
    assert {m.kv_entry_dim for m in mla} == {576}


# -- DeepSeek-R1-0528 ---------------------------------------------------------------------------


def test_deepseek_r1_mtp3_tp4_golden_62_rows_of_the_latent():
    """ROCm/ATOM pull request #2147: "R1-0528's 571392 decomposes as 62 layers x 16 tokens x 576
    x 1B" and, on DeepSeek-R1-0528-MXFP4 MTP3 tp4, "binding 62 mla rows = 61 target + 1 draft".
    MLA keeps one latent head, so tp 4 shares nothing out; three speculative tokens reuse the one
    MTP layer. deepseek-r1.json's fields are DeepSeek-V3's 671B config at a named commit, the
    architecture R1 and R1-0528 share (its `_sources`)."""
    runner = _runner("deepseek-r1", tp_size=4, kv_dtype="fp8", num_speculative_tokens=3)
    cfg = runner.text_config
    rows = cfg.require_int("num_hidden_layers") + cfg.require_int("num_nextn_predict_layers")
    latent = cfg.require_int("kv_lora_rank") + cfg.require_int("qk_rope_head_dim")
    assert (rows, latent) == (61 + 1, 512 + 64)
    assert rows * 16 * latent * 1 == 571392
    assert runner.entry_bytes() == {EntryClass.PAGE: 571392}
    assert runner.row_counts() == {"mla": 62}


# -- the padded (NoPE) MLA width, read from a config ---------------------------------------------


def test_a_declared_padded_mla_width_is_what_the_pool_prices_and_binds():
    cfg = load_model_config("deepseek-r1").with_overrides(mla_kv_entry_dim=640)
    runner = ModelRunner(cfg, EngineConfig(kv_dtype="fp8"))
    # 62 rows x 16 tokens x 640 (the declared width, not 512 + 64) x 1 B.
    assert runner.entry_bytes()[EntryClass.PAGE] == 62 * 16 * 640 == 634880
    runner.initialize(2)
    view = runner.skeleton.modules[0].kv_views["kv_cache"]
    # 2 scheduler blocks x 16 one-token backend blocks, each a 640-wide row.
    assert view.shape == (32, 1, 640)


def test_a_padded_width_narrower_than_the_latent_is_refused_by_name():
    cfg = load_model_config("deepseek-r1").with_overrides(mla_kv_entry_dim=500)
    with pytest.raises(ConfigFieldError, match=r"mla_kv_entry_dim.*500.*576"):
        build_modules(cfg)


# -- GLM-5.2 -----------------------------------------------------------------------------------


def test_glm52_is_sparse_mla_with_an_indexer_on_every_layer_and_its_mtp_layer():
    runner = _runner("glm-5.2", tp_size=8, kv_dtype="fp8")
    # 78 layers + 1 MTP layer, each with a latent row and an indexer-key row.
    assert runner.row_counts() == {"mla": 79, "mla_index": 79}
    # Per 16-token entry: kv 79 x 16 x 576 x 1 B = 728064; index 79 x 16 x 128 x 1 B = 161792
    # placed at 728064 (already 256-aligned); index_scale 79 x 16 x 4 B = 5056, placed at
    # 728064 + 161792 = 889856; the indexer group ends at 894912 -> rounded to 894976.
    kv = 79 * 16 * 576
    index = 79 * 16 * 128
    scale = 79 * 16 * 4
    group = -(-(index + scale) // 256) * 256
    assert kv + group == 894976
    assert runner.entry_bytes() == {EntryClass.PAGE: 894976}


# -- MiniMax-M3 (+ its EAGLE3 draft) -------------------------------------------------------------


def _m3(**engine):
    engine = {"tp_size": 4, "kv_dtype": "fp8", "scheduler_block_size": 128, **engine}
    return _runner("minimax-m3", "minimax-m3-eagle3", **engine)


def test_minimax_m3_target_pool_golden_tp4_fp8_block128():
    """Record: "`entry_bytes` byte parity ... 2961408 == 2961408 for the target pool" -- tp 4,
    fp8 KV, the target paging at sparse_block_size 128. Every number here is the public config's."""
    runner = _m3()
    text = runner.text_config
    sparse = text.require("sparse_attention_config")
    layers = text.require_int("num_hidden_layers")
    heads = text.require_int("num_key_value_heads") // 4
    head_dim = text.require_int("head_dim")
    block = sparse["sparse_block_size"]
    sparse_layers = sum(1 for f in sparse["sparse_attention_freq"] if f)
    assert (layers, heads, head_dim, block, sparse_layers) == (60, 1, 128, 128, 57)
    kv = 2 * layers * block * heads * head_dim * 1  # K and V, fp8: 1966080
    scales = 2 * layers * heads * block * 4  # one fp32 per token per head: 61440
    index = sparse_layers * block * sparse["sparse_index_dim"] * 1  # fp8 keys: 933888
    assert kv + scales + index == 2961408
    target = [s for s in runner.sub_pool_specs() if s.name == "target.h1d128"]
    assert [s.entry_bytes for s in target] == [2961408]
    assert runner.row_counts() == {"h1d128": 60, "mha_index": 57, "draft.h16d128": 1}


def test_minimax_m3_with_its_eagle3_draft_golden_tp4_fp8_block128():
    """Record: "`sub-pool kv: entry_bytes=3502080` unchanged" -- target plus the EAGLE3 draft's
    sibling pool, one entry each per scheduler block. The draft's one layer of 64 KV heads x 128
    is public (minimax-m3-eagle3.json `_sources`: NVIDIA/TensorRT-LLM pull request #17406 and
    vllm-project/recipes pull request #702 read them off the published config), and every
    number below is read from the two configs' own fields."""
    runner = _m3()
    draft = load_model_config("minimax-m3-eagle3")
    layers = draft.require_int("num_hidden_layers")
    kv_heads = draft.require_int("num_key_value_heads") // 4
    head_dim = draft.require_int("head_dim")
    # MHA: one query head per KV head (what every source calls the head).
    assert draft.require_int("num_attention_heads") == draft.require_int("num_key_value_heads")
    assert (layers, kv_heads, head_dim) == (1, 16, 128)
    # 1 layer x 128 tokens x 16 heads per rank x (128 K + 128 V) x 1 B (fp8) = 524288, and the
    # fp32 scales 2 x 128 tokens x 16 heads x 4 B = 16384, blocked at the target's 128.
    block = runner.builder.block_size
    kv = layers * block * kv_heads * (head_dim + head_dim) * 1
    scales = 2 * layers * block * kv_heads * 4
    assert (block, kv, scales, kv + scales) == (128, 524288, 16384, 540672)
    (draft_spec,) = [s for s in runner.sub_pool_specs() if s.name.startswith("draft.")]
    assert draft_spec.entry_bytes == kv + scales
    assert 2961408 + kv + scales == 3502080
    assert runner.entry_bytes() == {EntryClass.PAGE: 3502080}


def test_minimax_m3_indexer_keys_are_extra_fields_in_their_own_group():
    runner = _m3()
    pool = runner.builder.paged_pools["h1d128"]
    assert [[f.name for f in g] for g in pool.field_groups] == [
        ["k", "v"],
        ["k_scale", "v_scale"],
        ["index"],
    ]
    (index,) = pool.extra_fields
    assert (index.rows, index.shape, index.dtype) == (
        57,
        (1, 128, 128),
        runner.engine.kv_torch_dtype,
    )


def test_minimax_m3_sparse_layers_bind_their_keys_in_the_kernels_shape():
    runner = _m3().initialize(3)
    modules = runner.skeleton.modules
    dense, sparse = modules[2], modules[3]
    assert "index_cache" not in dense.kv_views
    keys = sparse.kv_views["index_cache"]
    # 3 scheduler blocks x 1 backend block of 128 keys, 128 wide, fp8.
    assert keys.shape == (3, 128, 128) and keys.dtype == runner.engine.kv_torch_dtype
    # The first sparse layer owns indexer row 0; its keys sit in the pool's third group.
    assert runner.builder.region_role_of(sparse, "index_cache") == "target.h1d128/index/0"


def test_minimax_m3_indexer_is_charged_per_scheduler_block_at_any_ratio():
    """The old sizing charged `sparse_layers * backend_page * dim` while the allocation was
    `blocks * block_ratio` pages deep: at a 256-token scheduler block (ratio 2) the index field
    must cost 2 x 128 keys an entry, not 128."""
    runner = _m3(scheduler_block_size=256)
    pool = runner.builder.paged_pools["h1d128"]
    (index,) = pool.extra_fields
    assert pool.blocks_per_entry == 2
    assert index.bytes == 57 * 2 * 128 * 128 * 1
    assert runner.entry_bytes()[EntryClass.PAGE] == 2 * 3502080


def test_minimax_m3_pages_at_the_nested_sparse_block_whatever_the_scheduler_says():
    runner = _m3(scheduler_block_size=1024)
    assert runner.builder.block_size == 128
    assert runner.builder.blocks_per_entry == 8
    with pytest.raises(ValueError, match=r"scheduler block size 64 is not a whole number.*128"):
        _m3(scheduler_block_size=64)


def test_a_sparse_attention_freq_that_does_not_cover_every_layer_is_refused_by_name():
    cfg = load_model_config("minimax-m3")
    text = dict(cfg.require("text_config"))
    text["sparse_attention_config"] = {
        **text["sparse_attention_config"],
        "sparse_attention_freq": [0, 0, 0] + [1] * 50,
    }
    bad = cfg.with_overrides(text_config=text)
    with pytest.raises(ConfigFieldError, match=r"sparse_attention_freq.*60 layers"):
        build_modules(bad)


# -- DeepSeek-V4 (Flash-DSpark) -----------------------------------------------------------------

V4 = "deepseek-v4-flash-dspark"


def _v4(**engine):
    engine = {
        "tp_size": 2,
        "kv_dtype": "fp8",
        "scheduler_block_size": 256,
        "num_speculative_tokens": 5,
        "index_cache_dtype": "fp4",
        **engine,
    }
    return _runner(V4, **engine)


def _ceil(a, b):
    return -(-a // b)


def test_deepseek_v4_dspark5_goldens_tp2_fp8_fp4_indexer():
    """Record: "sub-pool bytes byte-for-byte unchanged on V4-Flash-DSpark tp2 dspark-5 (`kv
    977152 / state 18652160`)" -- fp8 KV (two planes), the fp4 indexer gfx950 defaults to, 5
    draft tokens (dspark_block_size 5). Written out from the config, independently of the code:"""
    runner = _v4()
    cfg = runner.text_config
    ratios = cfg.require("compress_ratios")
    dense, csa, hca = ratios.count(0), ratios.count(4), ratios.count(128)
    head, rope = cfg.require_int("head_dim"), cfg.require_int("qk_rope_head_dim")
    idx = cfg.require_int("index_head_dim")
    window, spec, block = cfg.require_int("sliding_window"), 5, 256
    assert (len(ratios), dense, csa, hca) == (46, 5, 21, 20)
    assert (head, rope, idx, window, cfg.require_int("dspark_block_size")) == (512, 64, 128, 128, 5)
    widths = (head * 1, rope * 2)  # packed fp8 NoPE row, bf16 RoPE row: 512 + 128 B
    # PAGE, per 256-token block: 20 HCA x 2 rows + 21 CSA x 64 rows = 1384 rows x 640 B, plus
    # each CSA layer's fp4 indexer block: 64 rows x (128/128 tiles x 4 x 16 B + 4 x 1 B).
    envelope = hca * (block // 128) + csa * (block // 4)
    fp4_indexer = (idx // 128) * 4 * (block // 4) * (16 + 1)
    page = envelope * sum(widths) + csa * fp4_indexer
    assert (envelope, fp4_indexer, page) == (1384, 4352, 977152)
    # STATE, per request: the compressor state (fp32, ring 8 + 5 for CSA, 128 + 5 for HCA)
    # split over the two planes in the fewest shared rows, then the windows of 133 positions.
    ring = window + spec
    csa_main, csa_idx = csa * (8 + spec) * 2 * head * 4, csa * (8 + spec) * 2 * idx * 4
    hca_main = hca * (128 + spec) * head * 4
    # The split the planner finds: plane 0 (512 B rows) holds csa_idx_score + both HCA fields,
    # plane 1 (128 B rows) holds csa_main kv + score and csa_idx_kv.
    arena = max(_ceil(csa_idx + 2 * hca_main, 512), _ceil(2 * csa_main + csa_idx, 128))
    assert arena == 21826

    # Windows: dense 5 layers packed at stride 133; HCA interleaved in runs of 2 rows,
    # CSA in runs of 64 -- (L - 1) x stride + ring_offset(last position) + 1 rows each.
    def rows(layers, stride):
        chunk, within = divmod(ring - 1, stride)
        return (layers - 1) * stride + chunk * layers * stride + within + 1

    entry = rows(dense, ring) + rows(hca, 2) + rows(csa, 64)
    assert entry == 665 + 2679 + 3973 == 7317
    slot_rows = _ceil(arena + entry, 2) * 2
    state = slot_rows * sum(widths)
    assert (slot_rows, state) == (29144, 18652160)
    assert runner.entry_bytes() == {EntryClass.PAGE: 977152, EntryClass.STATE: 18652160}
    assert runner.row_counts() == {"v4_dense": 5, "v4_csa": 21, "v4_index": 21, "v4_hca": 20}


def test_deepseek_v4_bf16_build_declares_one_plane():
    runner = _v4(kv_dtype="bf16")
    d = runner.builder.declaration
    assert d.plane_widths == (512 * 2,)  # RoPE inline in the one bf16 row
    assert len(d.state_planes) == 1
    # 1384 envelope rows x 1024 B + the same fp4 indexer.
    assert runner.entry_bytes()[EntryClass.PAGE] == 1384 * 1024 + 21 * 4352
    runner.initialize(1, state_entries=2)
    assert len(runner.builder.planes) == 1
    assert not any(n.endswith("_rope") for m in runner.skeleton.modules for n in m.kv_views)


def test_deepseek_v4_fp8_indexer_regions_pack_with_nothing_between():
    from atom.pool_layout import indexer_block_bytes, indexer_block_regions

    # fp8: [64 rows x 128 keys][64 x 4 B scales] = 8192 + 256.
    keys, scales = indexer_block_regions(64, 128, fp4=False)
    assert (keys.offset, keys.nbytes, scales.offset, scales.nbytes) == (0, 8192, 8192, 256)
    # A head dim whose data region does not end on 256 B: the scales still start right after.
    for rows, dim in [(64, 132), (3, 100), (64, 128), (2, 8)]:
        data, scale = indexer_block_regions(rows, dim, fp4=False)
        assert scale.offset == data.nbytes == rows * dim
        assert indexer_block_bytes(rows, dim, fp4=False) == rows * dim + rows * 4
    assert indexer_block_regions(3, 100, fp4=False)[1].offset % 256 != 0


def test_deepseek_v4_allocates_its_own_and_holds_exactly_its_price():
    runner = _v4().initialize(3, state_entries=2)
    builder = runner.builder
    assert builder.paged_pool_bytes(3) == 0 and runner.paged_buf.numel() == 0
    held = sum(b.numel() for b in builder.own_buffers())
    assert held == 3 * 977152 + 2 * 18652160


def test_deepseek_v4_views_are_disjoint_and_read_back_what_each_wrote():
    """A distinct byte pattern through every bound view of every module, then every view read
    back: any two views sharing a byte would read the other's pattern."""
    runner = _v4(kv_dtype="bf16").initialize(2, state_entries=2)
    gen = torch.Generator().manual_seed(3)
    written = {}
    for m in runner.skeleton.modules:
        for name, view in m.kv_views.items():
            raw = view.view(torch.uint8)  # every view's last dim is dense
            raw.copy_(torch.randint(0, 256, raw.shape, generator=gen, dtype=torch.uint8))
            written[(m.prefix, name)] = raw.clone()
    assert len(written) > 3 * len(runner.skeleton.modules)
    for m in runner.skeleton.modules:
        for name, view in m.kv_views.items():
            assert torch.equal(view.view(torch.uint8), written[(m.prefix, name)]), (m, name)


def test_deepseek_v4_every_window_row_is_bound_once_and_compressed_rows_sit_where_the_geometry_says():
    runner = _v4(kv_dtype="bf16").initialize(1, state_entries=1)
    d = runner.builder.declaration
    ring = d.rows.ring_slots
    for m in runner.skeleton.modules:
        windows = sum(
            v.shape[1] * (v.shape[2] if v.dim() == 4 else 1)
            for n, v in m.kv_views.items()
            if n.startswith("window")
        )
        assert windows == ring, m  # 133 positions a layer, runs and tail together
    csa = next(m for m in runner.skeleton.modules if m.compress_ratio == 4)
    view = csa.kv_views["kv_compressed"]
    plane = runner.builder._typed_rows(0)
    first, count = d.rows.compressed_rows(4, 0)
    assert view.shape == (1, count, 512)
    assert view.data_ptr() == plane[first].data_ptr()


def test_deepseek_v4_refuses_the_pd_decode_side_by_its_state_pool_name():
    runner = _v4()
    with pytest.raises(ValueError, match=r"target\.v4_slot"):
        runner.import_paged_pool(torch.zeros(0, dtype=torch.uint8), 1)


def test_deepseek_v4_without_the_drafter_has_two_dense_rows_and_a_shorter_slot():
    runner = _v4(include_mtp=False, num_speculative_tokens=0)
    assert runner.row_counts() == {"v4_dense": 2, "v4_csa": 21, "v4_index": 21, "v4_hca": 20}
    assert runner.entry_bytes()[EntryClass.PAGE] == 977152  # the drafter compresses nothing
    assert runner.entry_bytes()[EntryClass.STATE] < 18652160


def test_deepseek_v4_pages_at_256_and_refuses_a_smaller_scheduler_block_by_both_numbers():
    with pytest.raises(ValueError, match=r"scheduler block size 16 .*256-token blocks"):
        _v4(scheduler_block_size=16)
