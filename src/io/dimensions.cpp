//! @file Dimension scales (H5DS, HDF5's high-level library): the netCDF-4 dimensions and
//! coordinate variables of cascade's files (docs/output-format.md, Dimensions).
#include "io/dimensions.hpp"

#include <hdf5_hl.h>

#include "cascade/error.hpp"

namespace cascade {
namespace io_detail {

namespace {
//! An open dataset, closed when it goes out of scope.
struct Dataset {
  explicit Dataset(hid_t file, const std::string& name)
      : id(CASCADE_CHECK_HDF5(H5Dopen2(file, name.c_str(), H5P_DEFAULT))) {}
  ~Dataset() { H5Dclose(id); }
  Dataset(const Dataset&) = delete;
  Dataset& operator=(const Dataset&) = delete;
  hid_t id;
};

int rank_of(hid_t set) {
  const hid_t space = CASCADE_CHECK_HDF5(H5Dget_space(set));
  const int rank = H5Sget_simple_extent_ndims(space);
  H5Sclose(space);
  return rank;
}
}  // namespace

void make_dimension_scale(hid_t file, const std::string& name) {
  Dataset set(file, name);
  if (rank_of(set.id) != 1) throw RunError(name + ": a dimension scale must have rank 1");
  if (CASCADE_CHECK_HDF5(H5DSis_scale(set.id)) > 0) return;
  const std::string dim = name.substr(name.find_last_of('/') + 1);
  CASCADE_CHECK_HDF5(H5DSset_scale(set.id, dim.c_str()));
}

void attach_dimension_scales(hid_t file, const std::string& name, const std::vector<std::string>& scales) {
  Dataset set(file, name);
  if (rank_of(set.id) != int(scales.size()))
    throw RunError(name + ": " + std::to_string(scales.size()) + " dimensions named for a dataset of rank " +
                   std::to_string(rank_of(set.id)));
  for (unsigned d = 0; d < scales.size(); ++d) {
    Dataset scale(file, scales[d]);
    if (CASCADE_CHECK_HDF5(H5DSis_attached(set.id, scale.id, d)) > 0) continue;
    CASCADE_CHECK_HDF5(H5DSattach_scale(set.id, scale.id, d));
  }
}

}  // namespace io_detail
}  // namespace cascade
