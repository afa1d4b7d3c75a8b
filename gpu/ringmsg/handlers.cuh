// The built-in device ring handlers of gpu/ringmsg, written as user
// handlers of the device ring loop (gpu/cuda/kernels/ring_loop.cuh): the
// structs VecMsg, UnaryMsg, ReduceMsg, SpMVMsg, VecReply, ScalarReply and
// SpMVReply are generated from ringmsg's Go types. Each handler is the
// entry of its own device ring kernel (Op.DeviceEntry); ringmsg.go has the
// Go implementations that compute the same results. A reply is zero-filled
// by the loop before the handler runs.

__device__ __forceinline__ double ringmsg_min_nan(double a, double b) {
	return a != a ? a : (b != b ? b : (b < a ? b : a));
}

__device__ __forceinline__ double ringmsg_max_nan(double a, double b) {
	return a != a ? a : (b != b ? b : (b > a ? b : a));
}

struct ringmsg_op_sum {
	__device__ double operator()(double a, double b) const { return a + b; }
};
struct ringmsg_op_min {
	__device__ double operator()(double a, double b) const { return ringmsg_min_nan(a, b); }
};
struct ringmsg_op_max {
	__device__ double operator()(double a, double b) const { return ringmsg_max_nan(a, b); }
};

#define RINGMSG_VEC_MAX (sizeof(((VecMsg *)0)->A) / sizeof(float))

__device__ uint32_t ringmsg_add(const rc_ctx *ctx, const VecMsg *m, VecReply *r, rc_no_state *) {
	if (m->N > RINGMSG_VEC_MAX) {
		return RC_STATUS_BAD_ARGS;
	}
	for (uint32_t i = ctx->thread; i < m->N; i += ctx->threads) {
		r->Y[i] = m->A[i] + m->B[i];
	}
	if (ctx->thread == 0) {
		r->N = m->N;
	}
	return RC_STATUS_OK;
}

__device__ uint32_t ringmsg_multiply(const rc_ctx *ctx, const VecMsg *m, VecReply *r, rc_no_state *) {
	if (m->N > RINGMSG_VEC_MAX) {
		return RC_STATUS_BAD_ARGS;
	}
	for (uint32_t i = ctx->thread; i < m->N; i += ctx->threads) {
		r->Y[i] = m->A[i] * m->B[i];
	}
	if (ctx->thread == 0) {
		r->N = m->N;
	}
	return RC_STATUS_OK;
}

// ringmsg_unary: kind 0 scale, 1 relu (NaN and -0 pass through), 2 leaky relu.
__device__ __forceinline__ uint32_t ringmsg_unary(const rc_ctx *ctx, const UnaryMsg *m, VecReply *r, int kind) {
	if (m->N > RINGMSG_VEC_MAX) {
		return RC_STATUS_BAD_ARGS;
	}
	const float p = m->Param;
	for (uint32_t i = ctx->thread; i < m->N; i += ctx->threads) {
		const float x = m->X[i];
		r->Y[i] = kind == 0 ? p * x : (kind == 1 ? (x < 0.0f ? 0.0f : x) : (x > 0.0f ? x : p * x));
	}
	if (ctx->thread == 0) {
		r->N = m->N;
	}
	return RC_STATUS_OK;
}

__device__ uint32_t ringmsg_scale(const rc_ctx *ctx, const UnaryMsg *m, VecReply *r, rc_no_state *) {
	return ringmsg_unary(ctx, m, r, 0);
}

__device__ uint32_t ringmsg_relu(const rc_ctx *ctx, const UnaryMsg *m, VecReply *r, rc_no_state *) {
	return ringmsg_unary(ctx, m, r, 1);
}

__device__ uint32_t ringmsg_leaky_relu(const rc_ctx *ctx, const UnaryMsg *m, VecReply *r, rc_no_state *) {
	return ringmsg_unary(ctx, m, r, 2);
}

// Reductions accumulate in double; every thread validates the same bytes,
// so all take the same branch around rc_block_reduce's barriers.
__device__ uint32_t ringmsg_sum(const rc_ctx *ctx, const ReduceMsg *m, ScalarReply *r, rc_no_state *) {
	if (m->N > RINGMSG_VEC_MAX) {
		return RC_STATUS_BAD_ARGS;
	}
	double acc = 0.0;
	for (uint32_t i = ctx->thread; i < m->N; i += ctx->threads) {
		acc += (double)m->X[i];
	}
	const double v = rc_block_reduce(ctx, acc, ringmsg_op_sum());
	if (ctx->thread == 0) {
		r->N = m->N;
		r->Value = (double)(float)v; // a float32 result, as cpu.Sum[float32]
	}
	return RC_STATUS_OK;
}

__device__ uint32_t ringmsg_min(const rc_ctx *ctx, const ReduceMsg *m, ScalarReply *r, rc_no_state *) {
	if (m->N > RINGMSG_VEC_MAX || m->N == 0) {
		return RC_STATUS_BAD_ARGS;
	}
	double acc = (double)m->X[0];
	for (uint32_t i = ctx->thread; i < m->N; i += ctx->threads) {
		acc = ringmsg_min_nan(acc, (double)m->X[i]);
	}
	const double v = rc_block_reduce(ctx, acc, ringmsg_op_min());
	if (ctx->thread == 0) {
		r->N = m->N;
		r->Value = v;
	}
	return RC_STATUS_OK;
}

__device__ uint32_t ringmsg_max(const rc_ctx *ctx, const ReduceMsg *m, ScalarReply *r, rc_no_state *) {
	if (m->N > RINGMSG_VEC_MAX || m->N == 0) {
		return RC_STATUS_BAD_ARGS;
	}
	double acc = (double)m->X[0];
	for (uint32_t i = ctx->thread; i < m->N; i += ctx->threads) {
		acc = ringmsg_max_nan(acc, (double)m->X[i]);
	}
	const double v = rc_block_reduce(ctx, acc, ringmsg_op_max());
	if (ctx->thread == 0) {
		r->N = m->N;
		r->Value = v;
	}
	return RC_STATUS_OK;
}

__device__ uint32_t ringmsg_spmv(const rc_ctx *ctx, const SpMVMsg *m, SpMVReply *r, rc_no_state *) {
	const uint32_t rows = m->Rows, cols = m->Cols, nnz = m->NNZ;
	if (rows > sizeof(m->RowPtr) / sizeof(int32_t) - 1 || cols > sizeof(m->X) / sizeof(float) ||
	    nnz > sizeof(m->ColIdx) / sizeof(int32_t)) {
		return RC_STATUS_BAD_ARGS;
	}
	if (m->RowPtr[0] != 0 || m->RowPtr[rows] != (int32_t)nnz) {
		return RC_STATUS_BAD_ARGS;
	}
	for (uint32_t i = 1; i <= rows; i++) {
		if (m->RowPtr[i] < m->RowPtr[i - 1]) {
			return RC_STATUS_BAD_ARGS;
		}
	}
	for (uint32_t j = 0; j < nnz; j++) {
		if (m->ColIdx[j] < 0 || (uint32_t)m->ColIdx[j] >= cols) {
			return RC_STATUS_BAD_ARGS;
		}
	}
	for (uint32_t i = ctx->thread; i < rows; i += ctx->threads) {
		double acc = 0.0;
		for (int32_t j = m->RowPtr[i]; j < m->RowPtr[i + 1]; j++) {
			acc += (double)m->Values[j] * (double)m->X[m->ColIdx[j]];
		}
		r->Y[i] = (float)acc;
	}
	if (ctx->thread == 0) {
		r->Rows = rows;
	}
	return RC_STATUS_OK;
}
