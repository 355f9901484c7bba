#pragma once
// Element types of the DSL. The C++ host types double as dtype tags:
// Ptr<bf16>, x.cast<f32>(), zeros<f32>({M, N}). PtrTo<T> is the element of pointer tiles.
#include <cstdint>
#include <type_traits>

#include "tilefuse/ir/dtype.hpp"
#include "tilefuse/ir/float8.hpp"
#include "tilefuse/ir/half.hpp"

namespace tilefuse {

using f16 = half;
using bf16 = bfloat16;
using f32 = float;
using f64 = double;
using f8e4m3 = float8_e4m3;
using f8e5m2 = float8_e5m2;
using i8 = int8_t;
using i16 = int16_t;
using i32 = int32_t;
using i64 = int64_t;
using u8 = uint8_t;
using u32 = uint32_t;

// Element of a pointer tile: a global pointer to T (T may be const: read-only).
template <class T>
struct PtrTo {};

template <class T>
struct is_ptr_elem : std::false_type {};
template <class T>
struct is_ptr_elem<PtrTo<T>> : std::true_type {};
template <class T>
inline constexpr bool is_ptr_elem_v = is_ptr_elem<T>::value;

template <class T>
struct pointee { using type = void; };
template <class T>
struct pointee<PtrTo<T>> { using type = T; };
template <class T>
using pointee_t = typename pointee<T>::type;

template <class T>
struct dtype_of;
#define TF_DTYPE(cpp, dt) \
  template <>             \
  struct dtype_of<cpp> { static constexpr DType value = DType::dt; };
TF_DTYPE(bool, i1)
TF_DTYPE(int8_t, i8)
TF_DTYPE(int16_t, i16)
TF_DTYPE(int32_t, i32)
TF_DTYPE(int64_t, i64)
TF_DTYPE(uint8_t, u8)
TF_DTYPE(uint32_t, u32)
TF_DTYPE(half, f16)
TF_DTYPE(bfloat16, bf16)
TF_DTYPE(float, f32)
TF_DTYPE(double, f64)
TF_DTYPE(float8_e4m3, f8e4m3)
TF_DTYPE(float8_e5m2, f8e5m2)
#undef TF_DTYPE
template <class T>
struct dtype_of<const T> : dtype_of<T> {};
template <class T>
struct dtype_of<PtrTo<T>> : dtype_of<std::remove_const_t<T>> {};
template <class T>
inline constexpr DType dtype_v = dtype_of<T>::value;

template <class T>
concept Element = requires { dtype_of<T>::value; };

template <DType D>
struct type_of_dtype;
#define TF_TYPE(dt, cpp) \
  template <>            \
  struct type_of_dtype<DType::dt> { using type = cpp; };
TF_TYPE(i1, bool)
TF_TYPE(i8, int8_t)
TF_TYPE(i16, int16_t)
TF_TYPE(i32, int32_t)
TF_TYPE(i64, int64_t)
TF_TYPE(u8, uint8_t)
TF_TYPE(u32, uint32_t)
TF_TYPE(f16, half)
TF_TYPE(bf16, bfloat16)
TF_TYPE(f32, float)
TF_TYPE(f64, double)
TF_TYPE(f8e4m3, float8_e4m3)
TF_TYPE(f8e5m2, float8_e5m2)
#undef TF_TYPE

// numpy-like promotion of two element types, at compile time.
template <class A, class B>
using promote_t = typename type_of_dtype<promote(dtype_v<A>, dtype_v<B>)>::type;

// The element type arithmetic on T produces: 8-bit floats compute in f32.
template <class T>
using arith_t = std::conditional_t<is_float8(dtype_v<T>), float, T>;

template <class T>
inline constexpr bool is_float_elem_v = is_float(dtype_v<T>) && !is_ptr_elem_v<T>;

}  // namespace tilefuse
