# cascade: the two commands.
#   make run    install missing dependencies, build, run the default deck (GPU if present, else CPU)
#   make test   the same set-up, then the test suite (ctest)
# Variables: BUILD (build directory), CMAKE_FLAGS (e.g. -DCASCADE_CUDA=OFF), DECK, JOBS.

BUILD       ?= build
DECK        ?= input/decaying.yaml
RUN_DIR     ?= output/$(basename $(notdir $(DECK)))
JOBS        ?= $(shell nproc 2>/dev/null || echo 2)
CMAKE_FLAGS ?=

# nvcc is often installed outside PATH; let CMake find it there.
export PATH := $(PATH):/usr/local/cuda/bin

.PHONY: all deps configure build run test clean

all: build

deps:
	@scripts/install-deps

$(BUILD)/CMakeCache.txt: | deps
	cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=Release $(CMAKE_FLAGS)

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

clean:
	rm -rf $(BUILD)
