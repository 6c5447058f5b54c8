# Command-line system tests: cascade_cli_test(NAME EXPECTED_RC REGEX ARGS...)
set(D "${CMAKE_CURRENT_SOURCE_DIR}/data")
set(DECK "${CMAKE_SOURCE_DIR}/input/poisson_gaussian.yaml")

# Bad input: one line naming file, line and key; exit code 2; nothing written.
cascade_cli_test(missing_file 2 "cannot open deck '.*nope.yaml': No such file" poisson "${D}/nope.yaml")
cascade_cli_test(syntax_error 2 "bad_syntax.yaml:[0-9]+: YAML syntax error" poisson "${D}/bad_syntax.yaml")
cascade_cli_test(unknown_key 2 "unknown_key.yaml:4: grid.nz: expected a known key of 'grid'.*found unknown key 'nz'" poisson "${D}/unknown_key.yaml")
cascade_cli_test(wrong_type 2 "wrong_type.yaml:2: grid.nx: expected an integer, found 'sixty-four'" poisson "${D}/wrong_type.yaml")
cascade_cli_test(bad_choice 2 "bad_choice.yaml:4: run.precision: expected one of double or single, found '8'" poisson "${D}/bad_choice.yaml")
cascade_cli_test(odd_nx 2 "odd_nx.yaml:2: grid.nx: expected an even integer in \\[4, [0-9]+\\], found 63" poisson "${D}/odd_nx.yaml")
cascade_cli_test(negative_nx 2 "negative_nx.yaml:2: grid.nx: expected an even integer.*found -64" poisson "${D}/negative_nx.yaml")
cascade_cli_test(zero_nx 2 "zero_nx.yaml:2: grid.nx: expected an even integer.*found 0" poisson "${D}/zero_nx.yaml")
cascade_cli_test(no_grid 2 "no_grid.yaml:[0-9]+: grid: expected a 'grid:' section" check "${D}/no_grid.yaml")
cascade_cli_test(check_unknown_key 2 "unknown_key.yaml:4: grid.nz" check "${D}/unknown_key.yaml")
cascade_cli_test(bad_set 2 "--set: expected section.key=value" check "${DECK}" --set nx64)
cascade_cli_test(bad_set_value 2 "--set grid.nx: expected an even integer.*found 65" check "${DECK}" --set grid.nx=65)
cascade_cli_test(unknown_subcommand 2 "error" frobnicate)
cascade_cli_test(no_subcommand 2 "error" )
cascade_cli_test(bad_backend_flag 2 "error.*backend" poisson "${DECK}" --backend gpu)

# Good input.
cascade_cli_test(help 0 "poisson" --help)
cascade_cli_test(info 0 "backends:" info)
cascade_cli_test(check_resolves 0 "nx: 128" check "${DECK}" --set grid.nx=128)
cascade_cli_test(poisson_cpu 0 "L-infinity error: 2\\.40419[0-9]e-05" poisson "${DECK}" --backend cpu --output out)
cascade_cli_test(poisson_auto 0 "backend: (cpu|cuda).*\\[(auto|requested)" poisson "${DECK}" --output out)
cascade_cli_test(bench_fft_cpu 0 "cpu +double +64" bench fft --n 64 --repeats 3 --precision double)
# Every row's check (on a GPU: each variant equals CUB's value) or exit code 1; 101: odd width.
cascade_cli_test(bench_reduction 0 "cpu +double +64 +4096 +max_cpu \\(OpenMP\\) +[0-9.]+ +[0-9.]+ +ok"
                 bench reduction --n 64 --n 101 --repeats 3 --precision double)
# bench step --callbacks off: the auto plan without the row-by-row evaluation, through the request.
cascade_cli_test(bench_step_cpu_off 0 "cpu +double +rk4 +basdevant +256 .*plain, one field a plan, callbacks off \\(run.step_transforms: plain, run.fft_callbacks: off\\)"
                 bench step --cpu --n 256 --repeats 3 --precision double --callbacks both)
# bench ensemble --forcing ring: a white-noise ensemble, every member forced in one pass.
cascade_cli_test(bench_ensemble_ring_cpu 0 "cpu +double +32 +4 +[0-9]+ "
                 bench ensemble --cpu --n 32 --members 4 --repeats 3 --precision double --forcing ring)

# cascade run: a short run writes deck.yaml and diagnostics.csv; a blow-up exits 1 with step,
# time and dt in its message; bad values in the solver's sections exit 2.
cascade_cli_test(run_taylor_green 0 "done: [0-9]+ steps to t = 10" run "${CMAKE_SOURCE_DIR}/input/taylor_green.yaml" --backend cpu --output out)
cascade_cli_test(run_blow_up 1 "run failed: (blow-up|time step below dt_min) at step [0-9]+, t = .*; last good checkpoint: out/checkpoints/ckpt_[0-9]+.h5$" run "${D}/unstable.yaml" --backend cpu --output out)
cascade_cli_test(run_deck_and_restart 2 "give a deck, or --restart CHECKPOINT" run "${CMAKE_SOURCE_DIR}/input/taylor_green.yaml" --restart x.h5)
cascade_cli_test(run_bad_stepper 2 "time.stepper: expected one of rk4 or rk3, found 'rk5'" run "${CMAKE_SOURCE_DIR}/input/taylor_green.yaml" --set time.stepper=rk5)
cascade_cli_test(run_negative_nu 2 "--set physics.nu: expected a finite value >= 0, found -1" run "${CMAKE_SOURCE_DIR}/input/taylor_green.yaml" --set physics.nu=-1)
cascade_cli_test(run_bad_forcing_wavenumber 2 "kolmogorov.yaml: --set forcing.wavenumber: expected an integer in \\[1, 85\\]" run "${CMAKE_SOURCE_DIR}/input/kolmogorov.yaml" --set forcing.wavenumber=200)

# Inputs the fuzzers found (tests/fuzz/regressions): still one line and exit code 2.
cascade_cli_test(fuzz_multiline_scalar 2 "[\\]n:nx:0 0'$" check "${CMAKE_CURRENT_SOURCE_DIR}/fuzz/regressions/deck-multiline-scalar.yaml")
cascade_cli_test(fuzz_corrupt_checkpoint 2 "checkpoint-hdf5-leak.ckpt: " run --restart "${CMAKE_CURRENT_SOURCE_DIR}/fuzz/regressions/checkpoint-hdf5-leak.ckpt")
# HDF5 1.10 itself reads freed memory on this file; the seal keeps it from ever parsing it.
cascade_cli_test(fuzz_hdf5_use_after_free 2 "checkpoint-hdf5-use-after-free.ckpt: not a cascade checkpoint \\(no cascade seal" run --restart "${CMAKE_CURRENT_SOURCE_DIR}/fuzz/regressions/checkpoint-hdf5-use-after-free.ckpt")
