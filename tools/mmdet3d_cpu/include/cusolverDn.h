/* kradar_plugin's CPU-only build of mmdet3d 0.17.3: cuSOLVER declarations torch 1.10's headers need. */
#pragma once
#include "cusolver_common.h"
typedef struct cusolverDnContext *cusolverDnHandle_t;
