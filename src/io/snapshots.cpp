//! @file snapshots/snap_NNNNNN.h5 and their XDMF index snapshots.xmf (docs/output-format.md,
//! Snapshots): kept across a restart, appended in place, rebuilt from the files when cut short.
#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>

#include "cascade/error.hpp"
#include "cascade/io.hpp"
#include "cascade/output.hpp"
#include "io/output_files.hpp"

namespace cascade {

using namespace output_files;

// ---------------------------------------------------------------- snapshots

std::string snapshot_name(long index) { return fmt::format("snap_{:06d}.h5", index); }

namespace {
const char kXdmfHead[] =
    "<?xml version=\"1.0\" ?>\n<!DOCTYPE Xdmf SYSTEM \"Xdmf.dtd\" []>\n<Xdmf Version=\"3.0\">\n <Domain>\n"
    "  <Grid Name=\"cascade\" GridType=\"Collection\" CollectionType=\"Temporal\">\n";
const char kXdmfTail[] = "  </Grid>\n </Domain>\n</Xdmf>\n";
const char kXdmfEntryStart[] = "   <Grid Name=\"snap_";
const char kXdmfEntryEnd[] = "   </Grid>\n";

//! A snapshot's grid in the x-y plane: XDMF orders dimensions and spacings slowest first
//! (z y x), and its 2D meshes are read by VTK as the (y, z) plane, so the field is a 3D mesh
//! one point thick along z, as the files store it: (t, y, x) with t of length 1.
std::string xdmf_entry(const SnapshotEntry& e) {
  std::string x;
  const std::string file = "snapshots/" + snapshot_name(e.index);
  x += fmt::format("{}{:06d}\" GridType=\"Uniform\">\n", kXdmfEntryStart, e.index);
  x += fmt::format("    <Time Value=\"{}\"/>\n", e.time);
  x += fmt::format("    <Topology TopologyType=\"3DCoRectMesh\" Dimensions=\"1 {} {}\"/>\n", e.ny, e.nx);
  x += "    <Geometry GeometryType=\"ORIGIN_DXDYDZ\">\n";
  x += "     <DataItem Format=\"XML\" NumberType=\"Float\" Precision=\"8\" Dimensions=\"3\">0 0 0</DataItem>\n";
  x += fmt::format(
      "     <DataItem Format=\"XML\" NumberType=\"Float\" Precision=\"8\" Dimensions=\"3\">1 {} {}</DataItem>\n", e.dy, e.dx);
  x += "    </Geometry>\n";
  // Files written before the t dimension hold (ny, nx) fields.
  const std::string dims = e.rank == 2 ? fmt::format("{} {}", e.ny, e.nx) : fmt::format("1 {} {}", e.ny, e.nx);
  // An ensemble's (1, member, ny, nx): member b's field is the array NAME_memberB of the one
  // grid, a hyperslab of the dataset in the HDF item's form that ParaView's Xdmf3 library reads
  // (PATH|start:stride:count:dataspace; the XDMF HyperSlab item it does not read).
  if (e.rank == 4) {
    for (const auto& name : e.fields)
      for (int b = 0; b < e.members; ++b) {
        x += fmt::format("    <Attribute Name=\"{}_member{}\" AttributeType=\"Scalar\" Center=\"Node\">\n", name, b);
        x += fmt::format("     <DataItem Format=\"HDF\" NumberType=\"Float\" Precision=\"{}\" Dimensions=\"{}\">"
                         "{}:/{}|0 {} 0 0:1 1 1 1:1 1 {} {}:1 {} {} {}</DataItem>\n",
                         e.precision_bytes, dims, file, name, b, e.ny, e.nx, e.members, e.ny, e.nx);
        x += "    </Attribute>\n";
      }
    x += kXdmfEntryEnd;
    return x;
  }
  for (const auto& name : e.fields) {
    x += fmt::format("    <Attribute Name=\"{}\" AttributeType=\"Scalar\" Center=\"Node\">\n", name);
    x += fmt::format(
        "     <DataItem Format=\"HDF\" NumberType=\"Float\" Precision=\"{}\" Dimensions=\"{}\">{}:/{}</DataItem>\n",
        e.precision_bytes, dims, file, name);
    x += "    </Attribute>\n";
  }
  x += kXdmfEntryEnd;
  return x;
}

//! The entries of an index this program wrote whose snapshot number is below `limit`, as
//! text; false if the file is missing or not one of ours.
bool kept_xdmf_entries(const std::string& path, long limit, std::string& out) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return false;
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string head = kXdmfHead, tail = kXdmfTail;
  if (text.compare(0, head.size(), head) != 0 || text.size() < head.size() + tail.size() ||
      text.compare(text.size() - tail.size(), tail.size(), tail) != 0)
    return false;
  std::size_t at = head.size();
  const std::size_t end = text.size() - tail.size();
  out.clear();
  while (at < end) {
    if (text.compare(at, sizeof(kXdmfEntryStart) - 1, kXdmfEntryStart) != 0) return false;
    const std::size_t close = text.find(kXdmfEntryEnd, at);
    if (close == std::string::npos || close + sizeof(kXdmfEntryEnd) - 1 > end) return false;
    const std::size_t stop = close + sizeof(kXdmfEntryEnd) - 1;
    const std::string digits = text.substr(at + sizeof(kXdmfEntryStart) - 1, 6);
    if (digits.find_first_not_of("0123456789") != std::string::npos || digits.size() != 6) return false;
    // An entry of an index written before the x-y plane (a 2D mesh): rebuilt from the files.
    if (text.find("3DCoRectMesh", at) > close) return false;
    if (std::stol(digits) < limit) out += text.substr(at, stop - at);
    at = stop;
  }
  return true;
}

//! Add one entry at the end of an index this program wrote, in place: O(1) a snapshot, where
//! rewriting it would be O(snapshots). A crash half-way can leave it cut short; the index is
//! rebuilt from the snapshot files when a run restarts. False if the file does not end as
//! ours does (then the caller rewrites it whole).
bool append_xdmf_entry(const std::string& path, const std::string& entry) {
  std::FILE* f = std::fopen(path.c_str(), "r+b");
  if (!f) return false;
  const std::string tail = kXdmfTail;
  std::string found(tail.size(), '\0');
  bool ok = std::fseek(f, -long(tail.size()), SEEK_END) == 0 && std::fread(&found[0], 1, found.size(), f) == found.size() &&
            found == tail && std::fseek(f, -long(tail.size()), SEEK_END) == 0;
  if (ok) {
    const std::string more = entry + tail;
    ok = std::fwrite(more.data(), 1, more.size(), f) == more.size() && std::fflush(f) == 0;
    if (!ok) {
      const std::string why = std::strerror(errno);
      std::fclose(f);
      throw RunError("cannot write '" + path + "' (disk full or write error?): " + why);
    }
  }
  std::fclose(f);
  return ok;
}
}  // namespace

//! The entries of the snapshot files below `limit` in dir/snapshots, read from the files.
std::string SnapshotSeries::listed_entries(long limit) const {
  std::string out;
  for (const auto& name : list_dir(dir_ + "/snapshots")) {
    const long index = numbered(name, "snap_");
    if (index < 0 || index >= limit) continue;
    H5Reader r(dir_ + "/snapshots/" + name);
    SnapshotEntry e{index, r.attr_double("time"), {}, 8, grid_.nx, grid_.ny, grid_.dx(), grid_.dy(), 3, 1};
    for (const char* f : {"vorticity", "streamfunction", "u", "v"})
      if (r.has(std::string("/") + f)) {
        e.fields.push_back(f);
        e.precision_bytes = r.float_size(std::string("/") + f);
        // (1, ny, nx), (ny, nx) in older files, (1, members, ny, nx) an ensemble's
        const auto shape = r.shape(std::string("/") + f);
        if (shape.size() >= 2 && shape.size() <= 4) {
          e.rank = int(shape.size());
          if (e.rank == 4) e.members = int(shape[1]);
          e.ny = int(shape[shape.size() - 2]);
          e.nx = int(shape[shape.size() - 1]);
        }
      }
    if (r.has_attribute("lx") && r.has_attribute("ly")) {
      e.dx = r.attr_double("lx") / e.nx;
      e.dy = r.attr_double("ly") / e.ny;
    }
    out += xdmf_entry(e);
  }
  return out;
}

SnapshotSeries::SnapshotSeries(const std::string& dir, const Grid& grid, long next_index, int members)
    : dir_(dir), grid_(grid), next_(next_index), members_(members) {
  // A restart keeps the entries of the snapshots written before the checkpoint: from the
  // index when it is whole (no file is opened), else from the files themselves.
  if (next_index > 0 && !kept_xdmf_entries(dir + "/snapshots.xmf", next_index, kept_))
    kept_ = listed_entries(next_index);
}

void SnapshotSeries::start() { make_directories(dir_ + "/snapshots"); }

template <class Real>
std::function<void()> SnapshotSeries::task(const Config& config, const std::string& backend, double t, long step,
                                           double dt, std::vector<std::pair<std::string, std::vector<Real>>> fields) {
  const int members = members_;
  SnapshotEntry e{next_, t, {}, int(sizeof(Real)), grid_.nx, grid_.ny, grid_.dx(), grid_.dy(),
                  members > 1 ? 4 : 3, members};
  for (const auto& f : fields) e.fields.push_back(f.first);
  ++next_;
  const std::string path = dir_ + "/snapshots/" + snapshot_name(e.index);
  const std::string entry = xdmf_entry(e);
  // The first snapshot of a run (or restart) writes the index whole; later ones add to it.
  const std::string whole = fresh_ ? kXdmfHead + kept_ + entry + kXdmfTail : std::string();
  fresh_ = false;
  kept_.clear();
  const std::string xmf_path = dir_ + "/snapshots.xmf";
  const Grid g = grid_;
  const long count = next_;
  return [=, dir = dir_, fields = std::move(fields)] {
    H5Writer f(path);
    write_provenance(f, config, backend);
    f.attribute("time", t);
    f.attribute("step", static_cast<long long>(step));
    f.attribute("dt", dt);
    f.attribute("lx", g.lx);
    f.attribute("ly", g.ly);
    // netCDF dimensions (t, y, x), t of length 1: a run's snapshots concatenate along t.
    // An ensemble's: (t, member, y, x).
    f.coordinate("/t", {t}, "time", "simulation time", "T");
    if (members > 1) write_member_coordinate(f, "/member", members);
    write_grid_coordinates(f, g.nx, g.ny, g.lx, g.ly);
    std::vector<std::uint64_t> shape{1, std::uint64_t(g.ny), std::uint64_t(g.nx)};
    std::vector<std::string> dims{"/t", "/y", "/x"};
    if (members > 1) {
      shape.insert(shape.begin() + 1, std::uint64_t(members));
      dims.insert(dims.begin() + 1, "/member");
    }
    for (const auto& [name, values] : fields) {
      const bool w = name == "vorticity", s = name == "streamfunction";
      f.write("/" + name, values.data(), shape,
              w ? "1/time" : s ? "length^2/time" : "length/time",
              w ? "vorticity omega = dv/dx - du/dy"
                : s ? "streamfunction psi, omega = -lap(psi), zero mean"
                    : (name == "u" ? "velocity u = dpsi/dy" : "velocity v = -dpsi/dx"));
      f.dimensions("/" + name, dims);
    }
    f.close();
    if (!whole.empty()) {
      write_text_atomically(xmf_path, whole);
    } else if (!append_xdmf_entry(xmf_path, entry)) {
      // Not as this run left it (edited, or cut short): rebuild it from the files.
      SnapshotSeries again(dir, g, 0, members);
      write_text_atomically(xmf_path, kXdmfHead + again.listed_entries(count) + kXdmfTail);
    }
  };
}

template std::function<void()> SnapshotSeries::task<float>(const Config&, const std::string&, double, long, double,
                                                            std::vector<std::pair<std::string, std::vector<float>>>);
template std::function<void()> SnapshotSeries::task<double>(const Config&, const std::string&, double, long, double,
                                                             std::vector<std::pair<std::string, std::vector<double>>>);

}  // namespace cascade
