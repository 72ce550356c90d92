// kradar_plugin's CPU-only build of mmdet3d 0.17.3 (tools/build_mmdet3d_cpu.py). The PyPI sdist of
// mmdet3d 0.17.3 ships mmdet3d/ops/voxel/src/voxelization.cpp without the header it includes; this one is
// ours: it declares the CPU functions of voxelization_cpu.cpp and gives voxelization.cpp the dispatchers its
// module exports, with the signatures mmdet3d's voxelize.py / scatter_points.py call them with. CUDA
// tensors, and the dynamic scatter (CUDA-only in mmdet3d 0.17.3), raise.
#pragma once
#include <torch/extension.h>

#include <stdexcept>
#include <string>
#include <vector>

namespace voxelization {

int hard_voxelize_cpu(const at::Tensor& points, at::Tensor& voxels, at::Tensor& coors,
                      at::Tensor& num_points_per_voxel, const std::vector<float> voxel_size,
                      const std::vector<float> coors_range, const int max_points, const int max_voxels,
                      const int NDim);

void dynamic_voxelize_cpu(const at::Tensor& points, at::Tensor& coors, const std::vector<float> voxel_size,
                          const std::vector<float> coors_range, const int NDim);

[[noreturn]] inline void needs_cuda(const std::string& op) {
  throw std::runtime_error("mmdet3d 0.17.3 op voxelization::" + op +
                           " needs CUDA; this is a CPU-only build (kradar_plugin tools/build_mmdet3d_cpu.py)");
}

inline int hard_voxelize(const at::Tensor& points, at::Tensor& voxels, at::Tensor& coors,
                         at::Tensor& num_points_per_voxel, const std::vector<float> voxel_size,
                         const std::vector<float> coors_range, const int max_points, const int max_voxels,
                         const int NDim = 3, const bool deterministic = true) {
  // deterministic: a CUDA kernel choice; the CPU voxelization is deterministic
  if (points.device().is_cuda()) needs_cuda("hard_voxelize_gpu");
  return hard_voxelize_cpu(points, voxels, coors, num_points_per_voxel, voxel_size, coors_range, max_points,
                           max_voxels, NDim);
}

inline void dynamic_voxelize(const at::Tensor& points, at::Tensor& coors, const std::vector<float> voxel_size,
                             const std::vector<float> coors_range, const int NDim = 3) {
  if (points.device().is_cuda()) needs_cuda("dynamic_voxelize_gpu");
  dynamic_voxelize_cpu(points, coors, voxel_size, coors_range, NDim);
}

inline std::vector<at::Tensor> dynamic_point_to_voxel_forward(const at::Tensor& feats, const at::Tensor& coors,
                                                              const std::string& reduce_type) {
  needs_cuda("dynamic_point_to_voxel_forward");
}

inline void dynamic_point_to_voxel_backward(at::Tensor& grad_feats, const at::Tensor& grad_reduced_feats,
                                            const at::Tensor& feats, const at::Tensor& reduced_feats,
                                            const at::Tensor& coors_idx, const at::Tensor& reduce_count,
                                            const std::string& reduce_type) {
  needs_cuda("dynamic_point_to_voxel_backward");
}

}  // namespace voxelization
