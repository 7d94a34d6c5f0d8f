# tests/helpers - helpers.proto_sets_oracle's unprivileged pass sets
# kernel.unprivileged_bpf_disabled to 0 holding the lock tests/CMakeLists.txt names.
target_compile_definitions(test_helpers_proto_sets_oracle PRIVATE
  BPFRT_UNPRIV_LOCK="${BPFRT_UNPRIV_LOCK}")
