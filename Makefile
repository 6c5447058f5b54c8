# cascade: the two commands.
#   make run    install missing dependencies, build, run the default deck (GPU if present, else CPU)
#   make test   the same set-up, then the test suite (ctest)
# Variables: BUILD (build directory), CMAKE_FLAGS (e.g. -DCASCADE_CUDA=OFF), DECK, JOBS.

BUILD       ?= build
DECK        ?= input/decaying.yaml
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

run: build
	./$(BUILD)/cascade run $(DECK) --overwrite

test: build
	@./$(BUILD)/cascade info | sed -n '/^backends:/,$$p'
	ctest --test-dir $(BUILD) --output-on-failure -j $(JOBS)

clean:
	rm -rf $(BUILD)
