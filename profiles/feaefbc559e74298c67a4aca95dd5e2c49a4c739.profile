dscope-profile 1
runtime c10
version 1.13.0
build-id libtorch_cpu feaefbc559e74298c67a4aca95dd5e2c49a4c739
build-id libc10 d7a83fb67d8787eee6a24d42bd5b9d0dfa9540fa
symbol realSingleton _ZN3c1010Dispatcher13realSingletonEv
symbol tls_dispatch_key_set _ZN3c104impl26raw_local_dispatch_key_setE
symbol fallthrough_kernel _ZN3c1018fallthrough_kernelEPNS_14OperatorKernelERKNS_14OperatorHandleENS_14DispatchKeySetEPSt6vectorINS_6IValueESaIS7_EE
symbol registerImpl _ZN3c1010Dispatcher12registerImplENS_12OperatorNameENS_8optionalINS_11DispatchKeyEEENS_14KernelFunctionENS2_INS_4impl12CppSignatureEEESt10unique_ptrINS_14FunctionSchemaESt14default_deleteISA_EENSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE
symbol registerFallback _ZN3c1010Dispatcher16registerFallbackENS_11DispatchKeyENS_14KernelFunctionENSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE
Dispatcher_from_realSingleton 103839248
sizeof_StdString 32
StdList_size 16
StdListNode_data 16
Dispatcher_operators 0
Dispatcher_backendFallbackKernels 176
OperatorDef_op 0
OperatorHandle_operatorDef 0
OperatorEntry_name 0
OperatorName_name 0
OperatorName_overload_name 32
OperatorEntry_schema 64
OptionalSchema_engaged 0
OptionalSchema_payload 8
AnnotatedSchema_debug 120
OperatorEntry_dispatchTable 248
OperatorEntry_kernels 3792
OperatorEntry_dispatchKeyExtractor 3640
DispatchKeyExtractor_nonFallthroughKeys 8
DispatchKeyExtractor_nonFallthroughKeysPerBackend 16
DispatchKeyExtractor_requiresBitsetPerBackend 128
sizeof_KernelFunction 32
KernelFunction_functor 0
KernelFunction_boxed 8
KernelFunction_unboxed 16
KernelFunction_sym_unboxed 24
sizeof_AnnotatedKernel 72
AnnotatedKernel_kernel 0
AnnotatedKernel_debug 40
KernelMap_entries 0
KernelMap_num_slots_minus_one 8
KernelMap_max_lookups 17
KernelMap_num_elements 24
sizeof_KernelMapEntry 40
KernelMapEntry_key 8
KernelMapEntry_list 16
sizeof_DispatchKey 2
TensorImpl_key_set 184
OptionalTensor_engaged 0
OptionalTensor_payload 8
RuntimeFunctor_kernel_func 24
PythonKernelHolder_func 24
Error_msg 8
PODLocalDispatchKeySet_included 0
PODLocalDispatchKeySet_excluded 8
count_backends 14
count_functionality_keys 41
count_table_slots 106
count_dispatch_keys 122
set_default_included 0x0000000804000000
set_default_excluded 0x0000070000000000
set_autogradother_backends 0x0000000001ffbfff
set_full_backend_mask 0x0000000000003fff
backend 0 CPUBit
backend 1 CUDABit
backend 2 HIPBit
backend 3 XLABit
backend 4 MPSBit
backend 5 IPUBit
backend 6 XPUBit
backend 7 HPUBit
backend 8 VEBit
backend 9 LazyBit
backend 10 MetaBit
backend 11 PrivateUse1Bit
backend 12 PrivateUse2Bit
backend 13 PrivateUse3Bit
runtime-keys 0 43 44 45 46 47 48 49 50 51 52 53 54 55 56 2 3 4 5 58 59 60 61 62 63 64 65 66 67 68 69 70 71 7 8 73 74 75 76 77 78 79 80 81 82 83 84 85 86 10 11 88 89 90 91 92 93 94 95 96 97 98 99 100 101 13 14 15 16 17 18 19 20 21 22 23 103 104 105 106 107 108 109 110 111 112 113 114 115 116 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39 40
key 0 Undefined bits=0x0 slot=-1
key 1 Dense bits=0x4000 slot=1 in=118,120,121
key 2 FPGA bits=0x8000 slot=15 in=118,120,121
key 3 ORT bits=0x10000 slot=16 in=118,120,121
key 4 Vulkan bits=0x20000 slot=17 in=118,120,121
key 5 Metal bits=0x40000 slot=18 in=118,120,121
key 6 Quantized bits=0x80000 slot=19 in=118,120,121
key 7 CustomRNGKeyId bits=0x100000 slot=33 in=118,120,121
key 8 MkldnnCPU bits=0x200000 slot=34 in=118,120,121
key 9 Sparse bits=0x400000 slot=35 in=118,120
key 10 SparseCsrCPU bits=0x800000 slot=49 in=118,120,121
key 11 SparseCsrCUDA bits=0x1000000 slot=50 in=118,120,121
key 12 NestedTensor bits=0x2000000 slot=51 in=118,119
key 13 BackendSelect bits=0x4000000 slot=65
key 14 Python bits=0x8000000 slot=66
key 15 Fake bits=0x10000000 slot=67
key 16 FuncTorchDynamicLayerBackMode bits=0x20000000 slot=68
key 17 Functionalize bits=0x40000000 slot=69
key 18 Named bits=0x80000000 slot=70
key 19 Conjugate bits=0x100000000 slot=71
key 20 Negative bits=0x200000000 slot=72
key 21 ZeroTensor bits=0x400000000 slot=73
key 22 ADInplaceOrView bits=0x800000000 slot=74
key 23 AutogradOther bits=0x1000000000 slot=75 in=117,118 autograd-backends=0x1ffbfff
key 24 AutogradFunctionality bits=0x2000000000 slot=76 in=117,118
key 25 AutogradNestedTensor bits=0x4000000000 slot=90 in=117,118,119 autograd-backends=0x2003fff
key 26 Tracer bits=0x8000000000 slot=91
key 27 AutocastCPU bits=0x10000000000 slot=92
key 28 AutocastXPU bits=0x20000000000 slot=93
key 29 AutocastCUDA bits=0x40000000000 slot=94
key 30 FuncTorchBatched bits=0x80000000000 slot=95
key 31 FuncTorchVmapMode bits=0x100000000000 slot=96
key 32 Batched bits=0x200000000000 slot=97
key 33 VmapMode bits=0x400000000000 slot=98
key 34 FuncTorchGradWrapper bits=0x800000000000 slot=99
key 35 DeferredInit bits=0x1000000000000 slot=100
key 36 PythonTLSSnapshot bits=0x2000000000000 slot=101
key 37 FuncTorchDynamicLayerFrontMode bits=0x4000000000000 slot=102
key 38 TESTING_ONLY_GenericWrapper bits=0x8000000000000 slot=103
key 39 TESTING_ONLY_GenericMode bits=0x10000000000000 slot=104
key 40 PythonDispatcher bits=0x20000000000000 slot=105
key 41 UnknownUnknown bits=0x0 slot=-1
key 42 Unknown bits=0x4000 slot=1 in=118,120,121
key 43 CPU bits=0x4001 slot=1 in=118,120,121
key 44 CUDA bits=0x4002 slot=2 in=118,120,121
key 45 HIP bits=0x4004 slot=3 in=118,120,121
key 46 XLA bits=0x4008 slot=4 in=118,120
key 47 MPS bits=0x4010 slot=5 in=118,120,121
key 48 IPU bits=0x4020 slot=6 in=118,120,121
key 49 XPU bits=0x4040 slot=7 in=118,120,121
key 50 HPU bits=0x4080 slot=8 in=118,120,121
key 51 VE bits=0x4100 slot=9 in=118,120,121
key 52 Lazy bits=0x4200 slot=10 in=118,120
key 53 Meta bits=0x4400 slot=11 in=118,120,121
key 54 PrivateUse1 bits=0x4800 slot=12 in=118,120,121
key 55 PrivateUse2 bits=0x5000 slot=13 in=118,120,121
key 56 PrivateUse3 bits=0x6000 slot=14 in=118,120,121
key 57 QuantizedUnknown bits=0x80000 slot=19 in=118,120,121
key 58 QuantizedCPU bits=0x80001 slot=19 in=118,120,121
key 59 QuantizedCUDA bits=0x80002 slot=20 in=118,120,121
key 60 QuantizedHIP bits=0x80004 slot=21 in=118,120,121
key 61 QuantizedXLA bits=0x80008 slot=22 in=118,120
key 62 QuantizedMPS bits=0x80010 slot=23 in=118,120,121
key 63 QuantizedIPU bits=0x80020 slot=24 in=118,120,121
key 64 QuantizedXPU bits=0x80040 slot=25 in=118,120,121
key 65 QuantizedHPU bits=0x80080 slot=26 in=118,120,121
key 66 QuantizedVE bits=0x80100 slot=27 in=118,120,121
key 67 QuantizedLazy bits=0x80200 slot=28 in=118,120
key 68 QuantizedMeta bits=0x80400 slot=29 in=118,120,121
key 69 QuantizedPrivateUse1 bits=0x80800 slot=30 in=118,120,121
key 70 QuantizedPrivateUse2 bits=0x81000 slot=31 in=118,120,121
key 71 QuantizedPrivateUse3 bits=0x82000 slot=32 in=118,120,121
key 72 SparseUnknown bits=0x400000 slot=35 in=118,120
key 73 SparseCPU bits=0x400001 slot=35 in=118,120
key 74 SparseCUDA bits=0x400002 slot=36 in=118,120
key 75 SparseHIP bits=0x400004 slot=37 in=118,120
key 76 SparseXLA bits=0x400008 slot=38 in=118,120
key 77 SparseMPS bits=0x400010 slot=39 in=118,120
key 78 SparseIPU bits=0x400020 slot=40 in=118,120
key 79 SparseXPU bits=0x400040 slot=41 in=118,120
key 80 SparseHPU bits=0x400080 slot=42 in=118,120
key 81 SparseVE bits=0x400100 slot=43 in=118,120
key 82 SparseLazy bits=0x400200 slot=44 in=118,120
key 83 SparseMeta bits=0x400400 slot=45 in=118,120
key 84 SparsePrivateUse1 bits=0x400800 slot=46 in=118,120
key 85 SparsePrivateUse2 bits=0x401000 slot=47 in=118,120
key 86 SparsePrivateUse3 bits=0x402000 slot=48 in=118,120
key 87 NestedTensorUnknown bits=0x2000000 slot=51 in=118,119
key 88 NestedTensorCPU bits=0x2000001 slot=51 in=118,119
key 89 NestedTensorCUDA bits=0x2000002 slot=52 in=118,119
key 90 NestedTensorHIP bits=0x2000004 slot=53 in=118,119
key 91 NestedTensorXLA bits=0x2000008 slot=54 in=118,119
key 92 NestedTensorMPS bits=0x2000010 slot=55 in=118,119
key 93 NestedTensorIPU bits=0x2000020 slot=56 in=118,119
key 94 NestedTensorXPU bits=0x2000040 slot=57 in=118,119
key 95 NestedTensorHPU bits=0x2000080 slot=58 in=118,119
key 96 NestedTensorVE bits=0x2000100 slot=59 in=118,119
key 97 NestedTensorLazy bits=0x2000200 slot=60 in=118,119
key 98 NestedTensorMeta bits=0x2000400 slot=61 in=118,119
key 99 NestedTensorPrivateUse1 bits=0x2000800 slot=62 in=118,119
key 100 NestedTensorPrivateUse2 bits=0x2001000 slot=63 in=118,119
key 101 NestedTensorPrivateUse3 bits=0x2002000 slot=64 in=118,119
key 102 AutogradUnknown bits=0x2000000000 slot=76 in=117,118
key 103 AutogradCPU bits=0x2000000001 slot=76 in=117,118 autograd-backends=0x4001
key 104 AutogradCUDA bits=0x2000000002 slot=77 in=117,118 autograd-backends=0x4002
key 105 AutogradHIP bits=0x2000000004 slot=78 in=117,118
key 106 AutogradXLA bits=0x2000000008 slot=79 in=117,118 autograd-backends=0x4008
key 107 AutogradMPS bits=0x2000000010 slot=80 in=117,118 autograd-backends=0x4010
key 108 AutogradIPU bits=0x2000000020 slot=81 in=117,118 autograd-backends=0x4020
key 109 AutogradXPU bits=0x2000000040 slot=82 in=117,118 autograd-backends=0x4040
key 110 AutogradHPU bits=0x2000000080 slot=83 in=117,118 autograd-backends=0x4080
key 111 AutogradVE bits=0x2000000100 slot=84 in=117,118
key 112 AutogradLazy bits=0x2000000200 slot=85 in=117,118 autograd-backends=0x4200
key 113 AutogradMeta bits=0x2000000400 slot=86 in=117,118 autograd-backends=0x4400
key 114 AutogradPrivateUse1 bits=0x2000000800 slot=87 in=117,118 autograd-backends=0x4800
key 115 AutogradPrivateUse2 bits=0x2000001000 slot=88 in=117,118 autograd-backends=0x5000
key 116 AutogradPrivateUse3 bits=0x2000002000 slot=89 in=117,118 autograd-backends=0x6000
key 117 Autograd bits=0x0 slot=-1 alias
key 118 CompositeImplicitAutograd bits=0x0 slot=-1 alias
key 119 CompositeImplicitAutogradNestedTensor bits=0x0 slot=-1 alias
key 120 CompositeExplicitAutograd bits=0x0 slot=-1 alias
key 121 CompositeExplicitAutogradNonFunctional bits=0x0 slot=-1 alias
AnnotatedSchema_schema 0
AnnotatedKernel_inferred_function_schema 32
StdVector_begin 0
StdVector_end 8
UniquePtr_pointer 0
SharedPtr_pointer 0
FunctionSchema_name 0
FunctionSchema_arguments 64
FunctionSchema_returns 88
FunctionSchema_is_vararg 112
FunctionSchema_is_varret 113
FunctionSchema_alias_kind 114
OptionalAliasKind_engaged 0
OptionalAliasKind_payload 1
AliasAnalysisKind_unset 1
name AliasAnalysisKind 0 INTERNAL_SPECIAL_CASE
name AliasAnalysisKind 1 CONSERVATIVE
name AliasAnalysisKind 2 FROM_SCHEMA
name AliasAnalysisKind 3 PURE_FUNCTION
sizeof_Argument 112
Argument_name 0
Argument_real_type 48
Argument_N 64
OptionalInt32_engaged 0
OptionalInt32_payload 4
Argument_default_value 72
OptionalIValue_engaged 0
OptionalIValue_payload 8
Argument_alias_info 96
Argument_kwarg_only 104
sizeof_AliasInfo 144
AliasInfo_before 0
AliasInfo_after 56
AliasInfo_contained 112
AliasInfo_is_write 136
SymbolSet_first 16
SymbolSetNode_next 0
SymbolSetNode_symbol 8
InternedStrings_from_realSingleton 103848240
InternedStrings_sym_to_info 56
sizeof_SymbolInfo 72
SymbolInfo_unqual_name 40
sizeof_TypePtr 16
TypePtr_pointer 0
Type_kind 8
ListType_element 32
FutureType_element 32
RRefType_element 32
OptionalType_element 72
DictType_types 32
TupleType_elements 160
TupleType_schema 192
NamedType_name 32
OptionalQualifiedName_engaged 0
OptionalQualifiedName_payload 8
QualifiedName_qualified 24
VarType_name 32
name TypeKind 0 AnyType
name TypeKind 1 EnumType
name TypeKind 2 AnyEnumType
name TypeKind 3 TensorType
name TypeKind 4 StorageType
name TypeKind 5 TupleType
name TypeKind 6 ListType
name TypeKind 7 DictType
name TypeKind 8 NumberType
name TypeKind 9 FloatType
name TypeKind 10 ComplexType
name TypeKind 11 FutureType
name TypeKind 12 RRefType
name TypeKind 13 IntType
name TypeKind 14 NoneType
name TypeKind 15 StringType
name TypeKind 16 GeneratorType
name TypeKind 17 QuantizerType
name TypeKind 18 BoolType
name TypeKind 19 OptionalType
name TypeKind 20 VarType
name TypeKind 21 DeviceObjType
name TypeKind 22 StreamObjType
name TypeKind 23 FunctionType
name TypeKind 24 ClassType
name TypeKind 25 PyObjectType
name TypeKind 26 CapsuleType
name TypeKind 27 InterfaceType
name TypeKind 28 QSchemeType
name TypeKind 29 ScalarTypeType
name TypeKind 30 LayoutType
name TypeKind 31 MemoryFormatType
name TypeKind 32 AnyListType
name TypeKind 33 AnyTupleType
name TypeKind 34 AnyClassType
name TypeKind 35 SymIntType
name TypeKind 36 SymFloatType
name TypeKind 37 UnionType
name TypeKind 38 DynamicType
name TypeStr 0 Any
name TypeStr 2 AnyEnumType
name TypeStr 3 Tensor
name TypeStr 4 Storage
name TypeStr 8 Scalar
name TypeStr 9 float
name TypeStr 10 complex
name TypeStr 13 int
name TypeStr 14 NoneType
name TypeStr 15 str
name TypeStr 16 Generator
name TypeStr 17 Quantizer
name TypeStr 18 bool
name TypeStr 21 Device
name TypeStr 22 Stream
name TypeStr 25 PyObject
name TypeStr 26 Capsule
name TypeStr 28 QScheme
name TypeStr 29 ScalarType
name TypeStr 30 Layout
name TypeStr 31 MemoryFormat
name TypeStr 32 list
name TypeStr 33 tuple
name TypeStr 34 AnyClassType
name TypeStr 35 SymInt
name TypeStr 36 SymFloat
sizeof_IValue 16
IValue_payload 0
IValue_tag 8
ConstantString_str 24
ListImpl_list 24
name IValueTag 0 None
name IValueTag 1 Tensor
name IValueTag 2 Storage
name IValueTag 3 Double
name IValueTag 4 ComplexDouble
name IValueTag 5 Int
name IValueTag 6 SymInt
name IValueTag 7 SymFloat
name IValueTag 8 Bool
name IValueTag 9 Tuple
name IValueTag 10 String
name IValueTag 11 Blob
name IValueTag 12 GenericList
name IValueTag 13 GenericDict
name IValueTag 14 Future
name IValueTag 15 Device
name IValueTag 16 Stream
name IValueTag 17 Object
name IValueTag 18 PyObject
name IValueTag 19 Uninitialized
name IValueTag 20 Capsule
name IValueTag 21 RRef
name IValueTag 22 Quantizer
name IValueTag 23 Generator
name IValueTag 24 Enum
THPVariable_cdata 24
PyObject_ob_type 8
PyTypeObject_tp_name 24
PyTypeObject_tp_base 256
symbol THPVariableClass THPVariableClass
digest fnv1a64 0xa3e162d277e9ac9e
