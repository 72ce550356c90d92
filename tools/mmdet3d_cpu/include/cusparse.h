/* kradar_plugin's CPU-only build of mmdet3d 0.17.3: cuSPARSE declarations torch 1.10's headers need. */
#pragma once
typedef struct cusparseContext *cusparseHandle_t;
typedef enum { CUSPARSE_STATUS_SUCCESS = 0 } cusparseStatus_t;
