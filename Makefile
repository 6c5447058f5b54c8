# cascade: the two commands.
#   make run    install missing dependencies, build, run the default deck (GPU if present, else CPU)
#   make test   the same set-up, then the test suite (ctest)
# Variables: BUILD (build directory), CMAKE_FLAGS (e.g. -DCASCADE_CUDA=OFF), DECK, JOBS,
# DEPS=no (skip scripts/install-deps), GENERATOR (Ninja where ninja is on PATH, else Unix Makefiles).

BUILD       ?= build
DECK        ?= input/decaying.yaml
RUN_DIR     ?= output/$(basename $(notdir $(DECK)))
JOBS        ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS ?=
DEPS        ?= yes
GENERATOR   ?= $(if $(shell command -v ninja 2>/dev/null),Ninja,Unix Makefiles)

# nvcc is often installed outside PATH; let CMake find it there.
export PATH := $(PATH):/usr/local/cuda/bin

.PHONY: all deps configure build run test sanitize fuzz clean

all: build

# Installs what is missing where apt can; elsewhere lists it and lets CMake decide (exit 0).
deps:
	@if [ "$(DEPS)" = no ]; then echo "make: DEPS=no: dependency step skipped"; else scripts/install-deps; fi

$(BUILD)/CMakeCache.txt: | deps
	cmake -S . -B $(BUILD) -G "$(GENERATOR)" -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS)

configure: $(BUILD)/CMakeCache.txt

build: deps configure
	cmake --build $(BUILD) -j $(JOBS)

# Run the deck, then draw its last vorticity snapshot and its spectra with the Python that
# CMake found importing numpy, h5py (and matplotlib here).
run: build
	./$(BUILD)/cascade run $(DECK) --overwrite --output $(RUN_DIR)
	@py=$$(sed -n 's/^CASCADE_PYTHON:FILEPATH=//p' $(BUILD)/CMakeCache.txt); \
	if [ -n "$$py" ] && "$$py" -c "import matplotlib" 2>/dev/null; then \
	  "$$py" postprocess/plot_snapshot.py $(RUN_DIR) && "$$py" postprocess/plot_spectra.py $(RUN_DIR); \
	else \
	  echo "make run: no Python with numpy, h5py and matplotlib found: no pictures (scripts/install-deps installs them)"; \
	fi

test: build
	@./$(BUILD)/cascade info | sed -n '/^backends:/,$$p'
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

# The CPU test suite under AddressSanitizer + UndefinedBehaviorSanitizer (no CUDA: the
# sanitizers and the CUDA runtime do not mix; no Python module: an ASan-built extension would
# need the runtime preloaded into python).
SAN_BUILD ?= build-sanitize
sanitize: deps
	@[ -f $(SAN_BUILD)/CMakeCache.txt ] || cmake -S . -B $(SAN_BUILD) -G "$(GENERATOR)" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
	  -DCASCADE_CUDA=OFF -DCASCADE_SANITIZE=ON -DCASCADE_PYTHON_MODULE=OFF
	cmake --build $(SAN_BUILD) -j $(JOBS)
	ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	  ctest --test-dir $(SAN_BUILD) --output-on-failure -j $(JOBS)

# libFuzzer on the deck reader and the checkpoint reader, FUZZ_SECONDS each; the corpora and
# any crashers are kept under tests/fuzz/ (crashers become regression inputs there). No leak is
# suppressed: corrupt files never reach HDF5 (the seal), which leaks on some of them.
FUZZ_BUILD   ?= build-fuzz
FUZZ_SECONDS ?= 600
fuzz: deps
	@[ -f $(FUZZ_BUILD)/CMakeCache.txt ] || CC=clang CXX=clang++ cmake -S . -B $(FUZZ_BUILD) -G "$(GENERATOR)" \
	  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCASCADE_CUDA=OFF -DCASCADE_TESTS=OFF -DCASCADE_FUZZ=ON -DCASCADE_PYTHON_MODULE=OFF
	cmake --build $(FUZZ_BUILD) -j $(JOBS) --target fuzz_deck fuzz_checkpoint
	mkdir -p tests/fuzz/crashes
	ASAN_OPTIONS=detect_leaks=1 $(FUZZ_BUILD)/fuzz_deck tests/fuzz/corpus_deck -max_total_time=$(FUZZ_SECONDS) \
	  -timeout=10 -artifact_prefix=tests/fuzz/crashes/deck- -print_final_stats=1
	ASAN_OPTIONS=detect_leaks=1 $(FUZZ_BUILD)/fuzz_checkpoint tests/fuzz/corpus_checkpoint -max_total_time=$(FUZZ_SECONDS) \
	  -timeout=10 -max_len=65536 -artifact_prefix=tests/fuzz/crashes/checkpoint- -print_final_stats=1

clean:
	rm -rf $(BUILD) $(SAN_BUILD) $(FUZZ_BUILD)
