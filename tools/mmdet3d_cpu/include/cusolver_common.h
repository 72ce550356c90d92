/* kradar_plugin's CPU-only build of mmdet3d 0.17.3: the cuSOLVER status type torch 1.10's headers name. */
#pragma once
typedef enum { CUSOLVER_STATUS_SUCCESS = 0 } cusolverStatus_t;
