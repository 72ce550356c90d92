/* kradar_plugin's CPU-only build of mmdet3d 0.17.3 (tools/build_mmdet3d_cpu.py): the declarations that
 * torch 1.10's ATen/cuda and THC headers need from cuBLAS, for host code that never calls cuBLAS. */
#pragma once
typedef struct cublasContext *cublasHandle_t;
typedef enum { CUBLAS_STATUS_SUCCESS = 0 } cublasStatus_t;
