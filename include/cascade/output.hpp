//! @file The output layer: the files of a run directory (docs/output-format.md) and the
//! background writer that keeps file writes off the time-stepping thread. Sources:
//! src/io/run_directory.cpp (lock, run id, clearing, temporaries, the writer),
//! src/io/diagnostics_log.cpp (the diagnostics schema, CSV + HDF5), src/io/spectra_log.cpp,
//! src/io/snapshots.cpp (with the XDMF index), src/io/checkpoint.cpp (write, read, verify; the
//! initial field of initial.type file). It includes nothing of the run or app layer above it.
#pragma once

#include <condition_variable>
#include <deque>
#include <exception>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "cascade/config.hpp"
#include "cascade/diagnostics.hpp"
#include "cascade/types.hpp"

namespace cascade {

//! Runs file-writing tasks, in order, on one background thread. A task's exception is kept and
//! rethrown by the next submit() or drain(), so a failed write stops the run with its message.
class BackgroundWriter {
 public:
  BackgroundWriter();
  ~BackgroundWriter();
  BackgroundWriter(const BackgroundWriter&) = delete;
  BackgroundWriter& operator=(const BackgroundWriter&) = delete;

  //! Queue a task; waits while kMaxQueued tasks are already waiting (bounded memory).
  void submit(std::function<void()> task);
  static constexpr std::size_t kMaxQueued = 4;
  //! Wait until every submitted task has finished; rethrow the first failure.
  void drain();

 private:
  void loop();
  void rethrow();
  std::mutex mutex_;
  std::condition_variable wake_, idle_;
  std::deque<std::function<void()>> tasks_;
  bool busy_ = false;
  bool stop_ = false;
  std::exception_ptr error_;
  std::thread thread_;
};

// ---------------------------------------------------------------- the run directory

//! True when `dir` holds cascade output (run_id, deck.yaml, diagnostics, snapshots or checkpoints).
bool holds_run(const std::string& dir);

//! An exclusive lock on a run directory for a run's lifetime: flock(2) on the directory itself
//! (nothing is created), or, on file systems that refuse that (NFS), on the file `.cascade.lock`
//! inside it. The kernel releases it however the process ends, SIGKILL included.
class RunLock {
 public:
  //! Locks `dir`, which must exist; InputError (exit 2) when another process holds it.
  explicit RunLock(const std::string& dir);
  ~RunLock();
  RunLock(const RunLock&) = delete;
  RunLock& operator=(const RunLock&) = delete;

 private:
  int fd_ = -1;
};

//! A run's identity: 32 hex digits drawn at creation, in `dir`/run_id and in every file the run
//! writes (attribute run_id), so that a checkpoint knows which directory it belongs to.
std::string new_run_id();
//! The id in `dir`/run_id, or "" (no such file: a new directory, or one written before ids).
std::string read_run_id(const std::string& dir);
void write_run_id(const std::string& dir, const std::string& id);
//! Remove the temporaries of writes that were killed (NAME.tmp-PID of a process that is gone).
void remove_stale_temporaries(const std::string& dir);
//! Remove cascade's own files from `dir` (for --overwrite); other files are left alone.
void clear_run(const std::string& dir);

// ---------------------------------------------------------------- diagnostics

//! One row of diagnostics.csv, kept as the text written (so that a restart rewrites the rows
//! it keeps byte for byte) and as numbers (for diagnostics.h5).
struct DiagnosticsRow {
  Diagnostics d;
  double wall = 0;
  std::string text;  //!< the CSV line, without newline
  int member = 0;    //!< an ensemble's member (its rows: one a member at each time, member after member)
};

//! One column of the diagnostics. The table diagnostics_schema() is the one statement of the
//! schema (docs/output-format.md, Diagnostics): it gives diagnostics.csv its header and rows, in
//! its order; diagnostics.h5 its datasets, of the same names, with these units and
//! descriptions; and a restart's re-reading of the CSV, by the header's names.
struct DiagnosticsColumn {
  enum class Type {
    Step,   //!< the step number: an integer in both files
    Member, //!< an ensemble's member (the CSV's column; diagnostics.h5's dimension `member`)
    Limit,  //!< what bound dt: its name in the CSV, its code in HDF5 (see its description)
    Real,   //!< a double, through `value`
  };
  std::string name, unit, description;
  Type type;
  std::string csv_format;                 //!< how the CSV writes a Real ("{}": shortest exact)
  double& (*value)(DiagnosticsRow& row);  //!< a Real's place in a row (null for the others)
};
const std::vector<DiagnosticsColumn>& diagnostics_schema();
//! The schema of a run of `members`: an ensemble's (members > 1) has the column `member` after
//! `t` (the CSV in long form: a row a member at each time); a single run's is the one above.
const std::vector<DiagnosticsColumn>& diagnostics_schema(int members);
//! "step,t,dt,...": the names of diagnostics_schema(members), in order.
std::string diagnostics_csv_header(int members = 1);
std::string diagnostics_csv_line(const Diagnostics& d, double wall, int members = 1, int member = 0);

//! diagnostics.csv (appended and flushed row by row) and diagnostics.h5 (rewritten whole by
//! write_h5, at checkpoints and at the end).
class DiagnosticsLog {
 public:
  //! A new log, or (restart) the rows at t <= t_keep of an existing one, read and checked
  //! here; nothing is written before start(). `members`: an ensemble's, whose rows come a
  //! member at a time (append them member after member at each time).
  DiagnosticsLog(const std::string& dir, bool restart, double t_keep, int members = 1);
  //! Write diagnostics.csv anew (header and kept rows) and open it for appending.
  void start();
  ~DiagnosticsLog();
  DiagnosticsLog(const DiagnosticsLog&) = delete;
  DiagnosticsLog& operator=(const DiagnosticsLog&) = delete;

  void append(const Diagnostics& d, double wall, int member = 0);
  //! A task that adds the rows since the last task to diagnostics.h5 (the first task of a run
  //! writes it anew, with the rows a restart kept); the log then forgets them, so that its
  //! memory does not grow with the run.
  std::function<void()> h5_task(const Config& config, const std::string& backend);

 private:
  std::string csv_path_, h5_path_;
  std::FILE* csv_ = nullptr;
  std::vector<DiagnosticsRow> pending_;  //!< rows not yet in diagnostics.h5
  bool fresh_ = true;                    //!< the next task writes the file anew
  int members_ = 1;
};

// ---------------------------------------------------------------- spectra

//! Shell spectra over time, added to spectra.h5 by h5_task (as DiagnosticsLog does).
class SpectraLog {
 public:
  //! Reads (restart) the spectra at t <= t_keep; nothing is written before start().
  //! `members`: an ensemble's, whose spectra are (t, member, k): append() takes every member's,
  //! one after the other.
  SpectraLog(const std::string& dir, bool restart, double t_keep, const std::vector<double>& k, int members = 1);
  //! A resized restart keeps the earlier series as spectra_until_tT.h5 (renamed here).
  void start();
  void append(double t, long step, const std::vector<double>& energy, const std::vector<double>& enstrophy,
              const std::vector<double>& flux, const std::vector<double>& flux_z);
  std::function<void()> h5_task(const Config& config, const std::string& backend, double dk);

 private:
  std::string path_;
  std::vector<double> k_, t_, energy_, enstrophy_, flux_, flux_z_;  //!< rows not yet in the file
  std::vector<long long> step_;
  bool fresh_ = true;
  std::string set_aside_;  //!< start() renames spectra.h5 to this (a resized restart)
  int members_ = 1;
};

// ---------------------------------------------------------------- snapshots

struct SnapshotEntry {
  long index;
  double time;
  std::vector<std::string> fields;
  int precision_bytes;  //!< 4 or 8
  int nx, ny;           //!< the snapshot's own grid (a resized restart changes it)
  double dx, dy;
  int rank = 3;         //!< of the stored fields: (t, y, x); 2, (y, x), in files written before t;
                        //!< 4, an ensemble's (t, member, y, x)
  int members = 1;
};

//! snapshots/snap_NNNNNN.h5 and the XDMF index snapshots.xmf (rewritten after each snapshot).
class SnapshotSeries {
 public:
  //! `next_index`: the number of the next snapshot (0 for a new run, from the checkpoint on a
  //! restart, in which case the index lists the existing files below it).
  //! The entries are read (and the files they come from checked) here; start() makes the folder.
  //! `members`: an ensemble's, whose fields are (t, member, y, x).
  SnapshotSeries(const std::string& dir, const Grid& grid, long next_index, int members = 1);
  void start();
  long next_index() const { return next_; }
  //! Fields (name -> values, ny x nx, the run's precision; an ensemble's: members x ny x nx)
  //! for the next snapshot: returns the task that writes it and the index.
  template <class Real>
  std::function<void()> task(const Config& config, const std::string& backend, double t, long step, double dt,
                             std::vector<std::pair<std::string, std::vector<Real>>> fields);

 private:
  std::string dir_;
  Grid grid_;
  std::string listed_entries(long limit) const;
  long next_;
  std::string kept_;   //!< a restart: the index entries of the snapshots before it
  bool fresh_ = true;  //!< the next snapshot writes the index whole
  int members_ = 1;
};

std::string snapshot_name(long index);

// ---------------------------------------------------------------- checkpoints

//! What a checkpoint holds besides the deck.
struct CheckpointMeta {
  double time = 0;
  long step = 0;
  double dt = 0;             //!< the last step's dt (the growth limiter's reference)
  long snapshot_index = 0;   //!< the number of the next snapshot
  std::string stepper;
  long long seed = 0;        //!< forcing RNG: counter-based, keyed by (seed, step, mode)
  BudgetState budget;        //!< the open diagnostics interval
};

//! checkpoints/ckpt_NNNNNN.h5 (NNNNNN: the step), written via a temporary name and renamed.
std::string checkpoint_path(const std::string& dir, long step);

//! A task writing the exact spectral state and everything a restart needs.
template <class Real>
std::function<void()> checkpoint_task(const std::string& path, const Config& config, const std::string& backend,
                                      std::vector<Complex<Real>> omega_hat, const CheckpointMeta& meta);

//! Remove all but the newest `keep` checkpoints of `dir`/checkpoints up to step `now` (by step
//! number), and those after it: after a restart from an earlier checkpoint they belong to the
//! continuation it abandoned (its diagnostics rows are dropped alike).
void prune_checkpoints(const std::string& dir, int keep, long now);

//! A checkpoint read back and verified (checksum, shapes, precision). Every problem is an
//! InputError naming the file. The deck is parsed with `overrides` applied.
struct CheckpointFile {
  std::string path;
  Config config;                   //!< the checkpoint's resolved deck, overrides applied
  Precision precision;             //!< of the stored state
  int nx = 0, ny = 0;              //!< grid of the stored state
  int members = 1;                 //!< of the stored state (an ensemble's: members > 1)
  std::vector<double> omega_hat;   //!< interleaved (re, im), members x ny x (nx/2+1)
  CheckpointMeta meta;
  std::string run_id;              //!< the run it belongs to ("" in files written before ids)
};

CheckpointFile read_checkpoint(const std::string& path, const std::vector<std::string>& overrides);

//! `cascade extract`: member `member` of the ensemble checkpoint `path` as a one-member
//! checkpoint at `output` (its deck member_config's, its state and budget the member's, no run
//! id), written only when every input has passed (InputError otherwise; `output` must not exist).
void extract_member(const std::string& path, int member, const std::string& output);

//! The integer coordinate variable of an ensemble's dimension `member` (0 to members - 1).
class H5Writer;
void write_member_coordinate(H5Writer& file, const std::string& name, int members);

//! The field of initial.type file, read and checked (even sizes, finite values): a snapshot's
//! /vorticity or a checkpoint's verified state. The run gives it to Solver::initialise.
InitialField read_initial_field(const std::string& path);

}  // namespace cascade
