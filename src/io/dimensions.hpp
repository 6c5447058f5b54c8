//! @file netCDF-4 dimensions in the files H5Writer makes: HDF5 dimension scales (the high-level
//! library's H5DS), which netCDF-C, h5netcdf and xarray read as named dimensions with their
//! coordinate variables (docs/output-format.md). Private to src/io.
#pragma once
#include <hdf5.h>

#include <string>
#include <vector>

namespace cascade {
namespace io_detail {

//! Make the rank-1 dataset `name` of `file` the dimension scale of the dimension named as its
//! last path component: a netCDF coordinate variable. Nothing when it is one already.
void make_dimension_scale(hid_t file, const std::string& name);

//! Attach the dimension scales `scales` (dataset paths, one a dimension of `name`, in order) to
//! the dataset `name`; those attached already are left (a file being appended to).
void attach_dimension_scales(hid_t file, const std::string& name, const std::vector<std::string>& scales);

}  // namespace io_detail
}  // namespace cascade
