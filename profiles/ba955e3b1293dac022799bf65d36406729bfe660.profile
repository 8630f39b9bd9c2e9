dscope-profile 1
runtime c10
version 2.14.1
build-id libtorch_cpu ba955e3b1293dac022799bf65d36406729bfe660
build-id libc10 e226edcd2e9773a18ede34f4b015931f95b36c0d
symbol realSingleton _ZN3c1010Dispatcher13realSingletonEv
symbol tls_dispatch_key_set _ZN3c104impl26raw_local_dispatch_key_setE
symbol fallthrough_kernel _ZN3c1018fallthrough_kernelEPNS_14OperatorKernelERKNS_14OperatorHandleENS_14DispatchKeySetEPSt6vectorINS_6IValueESaIS7_EE
symbol registerImpl _ZN3c1010Dispatcher12registerImplENS_12OperatorNameESt8optionalINS_11DispatchKeyEENS_14KernelFunctionES2_INS_4impl12CppSignatureEESt10unique_ptrINS_14FunctionSchemaESt14default_deleteISA_EENSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE
symbol registerFallback _ZN3c1010Dispatcher16registerFallbackENS_11DispatchKeyENS_14KernelFunctionENSt7__cxx1112basic_stringIcSt11char_traitsIcESaIcEEE
Dispatcher_from_realSingleton 265339840
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
OptionalSchema_engaged 152
OptionalSchema_payload 0
AnnotatedSchema_debug 120
OperatorEntry_dispatchTable 248
OperatorEntry_kernels 5888
OperatorEntry_dispatchKeyExtractor 5728
DispatchKeyExtractor_nonFallthroughKeys 8
DispatchKeyExtractor_nonFallthroughKeysPerBackend 16
DispatchKeyExtractor_requiresBitsetPerBackend 144
sizeof_KernelFunction 40
KernelFunction_functor 0
KernelFunction_boxed 8
KernelFunction_unboxed 16
KernelFunction_sym_unboxed 24
sizeof_AnnotatedKernel 80
AnnotatedKernel_kernel 0
AnnotatedKernel_debug 48
KernelMap_entries 0
KernelMap_num_slots_minus_one 8
KernelMap_max_lookups 17
KernelMap_num_elements 24
sizeof_KernelMapEntry 40
KernelMapEntry_key 8
KernelMapEntry_list 16
sizeof_DispatchKey 2
TensorImpl_key_set 168
OptionalTensor_engaged 8
OptionalTensor_payload 0
RuntimeFunctor_kernel_func 16
PythonKernelHolder_func 16
Error_msg 8
PODLocalDispatchKeySet_included 0
PODLocalDispatchKeySet_excluded 8
count_backends 16
count_functionality_keys 47
count_table_slots 137
count_dispatch_keys 156
set_default_included 0x0000000404000000
set_default_excluded 0x0001ff8000000000
set_autogradother_backends 0x0000000001feffff
set_full_backend_mask 0x000000000000ffff
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
backend 10 MTIA
backend 11 MAIA
backend 12 PrivateUse1Bit
backend 13 PrivateUse2Bit
backend 14 PrivateUse3Bit
backend 15 MetaBit
runtime-keys 0 49 50 51 52 53 54 55 56 57 58 59 60 61 62 63 64 2 3 4 66 67 68 69 70 71 72 73 74 75 76 77 78 79 80 81 6 7 83 84 85 86 87 88 89 90 91 92 93 94 95 96 97 98 100 101 102 103 104 105 106 107 108 109 110 111 112 113 114 115 117 118 119 120 121 122 123 124 125 126 127 128 129 130 131 132 11 12 13 14 15 16 17 18 19 20 134 135 136 137 138 139 140 141 142 143 144 145 146 147 148 149 22 23 24 25 26 27 28 29 30 31 32 33 34 35 36 37 38 39 40 41 42 43 44 45 46
key 0 Undefined bits=0x0 slot=-1
key 1 Dense bits=0x10000 slot=1 in=151,154,155
key 2 FPGA bits=0x20000 slot=17 in=151,154,155
key 3 Vulkan bits=0x40000 slot=18 in=151,154,155
key 4 Metal bits=0x80000 slot=19 in=151,154,155
key 5 Quantized bits=0x100000 slot=20 in=151,154,155
key 6 CustomRNGKeyId bits=0x200000 slot=36 in=151,154,155
key 7 MkldnnCPU bits=0x400000 slot=37 in=151,154,155
key 8 Sparse bits=0x800000 slot=38 in=151,154
key 9 SparseCsr bits=0x1000000 slot=54 in=151,154,155
key 10 NestedTensor bits=0x2000000 slot=70 in=151,153
key 11 BackendSelect bits=0x4000000 slot=86
key 12 Fake bits=0x8000000 slot=87
key 13 Python bits=0x10000000 slot=88
key 14 FuncTorchDynamicLayerBackMode bits=0x20000000 slot=89
key 15 Functionalize bits=0x40000000 slot=90
key 16 Conjugate bits=0x80000000 slot=91
key 17 Negative bits=0x100000000 slot=92
key 18 ZeroTensor bits=0x200000000 slot=93
key 19 ADInplaceOrView bits=0x400000000 slot=94
key 20 AutogradOther bits=0x800000000 slot=95 in=150,151 autograd-backends=0x1feffff
key 21 AutogradFunctionality bits=0x1000000000 slot=96 in=150,151
key 22 AutogradNestedTensor bits=0x2000000000 slot=112 in=150,151,153 autograd-backends=0x200ffff
key 23 Tracer bits=0x4000000000 slot=113
key 24 AutocastCPU bits=0x8000000000 slot=114
key 25 AutocastMTIA bits=0x10000000000 slot=115
key 26 AutocastMAIA bits=0x20000000000 slot=116
key 27 AutocastXPU bits=0x40000000000 slot=117
key 28 AutocastIPU bits=0x80000000000 slot=118
key 29 AutocastHPU bits=0x100000000000 slot=119
key 30 AutocastXLA bits=0x200000000000 slot=120
key 31 AutocastMPS bits=0x400000000000 slot=121
key 32 AutocastCUDA bits=0x800000000000 slot=122
key 33 AutocastPrivateUse1 bits=0x1000000000000 slot=123
key 34 FuncTorchBatched bits=0x2000000000000 slot=124 in=152
key 35 BatchedNestedTensor bits=0x4000000000000 slot=125
key 36 FuncTorchVmapMode bits=0x8000000000000 slot=126
key 37 Batched bits=0x10000000000000 slot=127
key 38 VmapMode bits=0x20000000000000 slot=128
key 39 FuncTorchGradWrapper bits=0x40000000000000 slot=129
key 40 DeferredInit bits=0x80000000000000 slot=130
key 41 PythonTLSSnapshot bits=0x100000000000000 slot=131
key 42 FuncTorchDynamicLayerFrontMode bits=0x200000000000000 slot=132
key 43 TESTING_ONLY_GenericWrapper bits=0x400000000000000 slot=133
key 44 TESTING_ONLY_GenericMode bits=0x800000000000000 slot=134
key 45 PreDispatch bits=0x1000000000000000 slot=135
key 46 PythonDispatcher bits=0x2000000000000000 slot=136
key 47 UnknownUnknown bits=0x0 slot=-1
key 48 Undefined bits=0x10000 slot=1 in=151,154,155
key 49 CPU bits=0x10001 slot=1 in=151,154,155
key 50 CUDA bits=0x10002 slot=2 in=151,154,155
key 51 HIP bits=0x10004 slot=3 in=151,154,155
key 52 XLA bits=0x10008 slot=4 in=151,154
key 53 MPS bits=0x10010 slot=5 in=151,154,155
key 54 IPU bits=0x10020 slot=6 in=151,154,155
key 55 XPU bits=0x10040 slot=7 in=151,154,155
key 56 HPU bits=0x10080 slot=8 in=151,154,155
key 57 VE bits=0x10100 slot=9 in=151,154,155
key 58 Lazy bits=0x10200 slot=10 in=151,154
key 59 MTIA bits=0x10400 slot=11 in=151,154,155
key 60 MAIA bits=0x10800 slot=12 in=151,154,155
key 61 PrivateUse1 bits=0x11000 slot=13 in=151,154,155
key 62 PrivateUse2 bits=0x12000 slot=14 in=151,154,155
key 63 PrivateUse3 bits=0x14000 slot=15 in=151,154,155
key 64 Meta bits=0x18000 slot=16 in=151,154,155
key 65 QuantizedUndefined bits=0x100000 slot=20 in=151,154,155
key 66 QuantizedCPU bits=0x100001 slot=20 in=151,154,155
key 67 QuantizedCUDA bits=0x100002 slot=21 in=151,154,155
key 68 QuantizedHIP bits=0x100004 slot=22 in=151,154,155
key 69 QuantizedXLA bits=0x100008 slot=23 in=151,154
key 70 QuantizedMPS bits=0x100010 slot=24 in=151,154,155
key 71 QuantizedIPU bits=0x100020 slot=25 in=151,154,155
key 72 QuantizedXPU bits=0x100040 slot=26 in=151,154,155
key 73 QuantizedHPU bits=0x100080 slot=27 in=151,154,155
key 74 QuantizedVE bits=0x100100 slot=28 in=151,154,155
key 75 QuantizedLazy bits=0x100200 slot=29 in=151,154
key 76 QuantizedMTIA bits=0x100400 slot=30 in=151,154,155
key 77 QuantizedMAIA bits=0x100800 slot=31 in=151,154,155
key 78 QuantizedPrivateUse1 bits=0x101000 slot=32 in=151,154,155
key 79 QuantizedPrivateUse2 bits=0x102000 slot=33 in=151,154,155
key 80 QuantizedPrivateUse3 bits=0x104000 slot=34 in=151,154,155
key 81 QuantizedMeta bits=0x108000 slot=35 in=151,154,155
key 82 SparseUndefined bits=0x800000 slot=38 in=151,154
key 83 SparseCPU bits=0x800001 slot=38 in=151,154
key 84 SparseCUDA bits=0x800002 slot=39 in=151,154
key 85 SparseHIP bits=0x800004 slot=40 in=151,154
key 86 SparseXLA bits=0x800008 slot=41 in=151,154
key 87 SparseMPS bits=0x800010 slot=42 in=151,154
key 88 SparseIPU bits=0x800020 slot=43 in=151,154
key 89 SparseXPU bits=0x800040 slot=44 in=151,154
key 90 SparseHPU bits=0x800080 slot=45 in=151,154
key 91 SparseVE bits=0x800100 slot=46 in=151,154
key 92 SparseLazy bits=0x800200 slot=47 in=151,154
key 93 SparseMTIA bits=0x800400 slot=48 in=151,154
key 94 SparseMAIA bits=0x800800 slot=49 in=151,154
key 95 SparsePrivateUse1 bits=0x801000 slot=50 in=151,154
key 96 SparsePrivateUse2 bits=0x802000 slot=51 in=151,154
key 97 SparsePrivateUse3 bits=0x804000 slot=52 in=151,154
key 98 SparseMeta bits=0x808000 slot=53 in=151,154
key 99 SparseCsrUndefined bits=0x1000000 slot=54 in=151,154,155
key 100 SparseCsrCPU bits=0x1000001 slot=54 in=151,154,155
key 101 SparseCsrCUDA bits=0x1000002 slot=55 in=151,154,155
key 102 SparseCsrHIP bits=0x1000004 slot=56 in=151,154,155
key 103 SparseCsrXLA bits=0x1000008 slot=57 in=151,154
key 104 SparseCsrMPS bits=0x1000010 slot=58 in=151,154,155
key 105 SparseCsrIPU bits=0x1000020 slot=59 in=151,154,155
key 106 SparseCsrXPU bits=0x1000040 slot=60 in=151,154,155
key 107 SparseCsrHPU bits=0x1000080 slot=61 in=151,154,155
key 108 SparseCsrVE bits=0x1000100 slot=62 in=151,154,155
key 109 SparseCsrLazy bits=0x1000200 slot=63 in=151,154
key 110 SparseCsrMTIA bits=0x1000400 slot=64 in=151,154,155
key 111 SparseCsrMAIA bits=0x1000800 slot=65 in=151,154,155
key 112 SparseCsrPrivateUse1 bits=0x1001000 slot=66 in=151,154,155
key 113 SparseCsrPrivateUse2 bits=0x1002000 slot=67 in=151,154,155
key 114 SparseCsrPrivateUse3 bits=0x1004000 slot=68 in=151,154,155
key 115 SparseCsrMeta bits=0x1008000 slot=69 in=151,154,155
key 116 NestedTensorUndefined bits=0x2000000 slot=70 in=151,153
key 117 NestedTensorCPU bits=0x2000001 slot=70 in=151,153
key 118 NestedTensorCUDA bits=0x2000002 slot=71 in=151,153
key 119 NestedTensorHIP bits=0x2000004 slot=72 in=151,153
key 120 NestedTensorXLA bits=0x2000008 slot=73 in=151,153
key 121 NestedTensorMPS bits=0x2000010 slot=74 in=151,153
key 122 NestedTensorIPU bits=0x2000020 slot=75 in=151,153
key 123 NestedTensorXPU bits=0x2000040 slot=76 in=151,153
key 124 NestedTensorHPU bits=0x2000080 slot=77 in=151,153
key 125 NestedTensorVE bits=0x2000100 slot=78 in=151,153
key 126 NestedTensorLazy bits=0x2000200 slot=79 in=151,153
key 127 NestedTensorMTIA bits=0x2000400 slot=80 in=151,153
key 128 NestedTensorMAIA bits=0x2000800 slot=81 in=151,153
key 129 NestedTensorPrivateUse1 bits=0x2001000 slot=82 in=151,153
key 130 NestedTensorPrivateUse2 bits=0x2002000 slot=83 in=151,153
key 131 NestedTensorPrivateUse3 bits=0x2004000 slot=84 in=151,153
key 132 NestedTensorMeta bits=0x2008000 slot=85 in=151,153
key 133 AutogradUndefined bits=0x1000000000 slot=96 in=150,151
key 134 AutogradCPU bits=0x1000000001 slot=96 in=150,151 autograd-backends=0x10001
key 135 AutogradCUDA bits=0x1000000002 slot=97 in=150,151 autograd-backends=0x10002
key 136 AutogradHIP bits=0x1000000004 slot=98 in=150,151
key 137 AutogradXLA bits=0x1000000008 slot=99 in=150,151 autograd-backends=0x10008
key 138 AutogradMPS bits=0x1000000010 slot=100 in=150,151 autograd-backends=0x10010
key 139 AutogradIPU bits=0x1000000020 slot=101 in=150,151 autograd-backends=0x10020
key 140 AutogradXPU bits=0x1000000040 slot=102 in=150,151 autograd-backends=0x10040
key 141 AutogradHPU bits=0x1000000080 slot=103 in=150,151 autograd-backends=0x10080
key 142 AutogradVE bits=0x1000000100 slot=104 in=150,151
key 143 AutogradLazy bits=0x1000000200 slot=105 in=150,151 autograd-backends=0x10200
key 144 AutogradMTIA bits=0x1000000400 slot=106 in=150,151
key 145 AutogradMAIA bits=0x1000000800 slot=107 in=150,151 autograd-backends=0x10800
key 146 AutogradPrivateUse1 bits=0x1000001000 slot=108 in=150,151 autograd-backends=0x11000
key 147 AutogradPrivateUse2 bits=0x1000002000 slot=109 in=150,151 autograd-backends=0x12000
key 148 AutogradPrivateUse3 bits=0x1000004000 slot=110 in=150,151 autograd-backends=0x14000
key 149 AutogradMeta bits=0x1000008000 slot=111 in=150,151 autograd-backends=0x18000
key 150 Autograd bits=0x0 slot=-1 alias
key 151 CompositeImplicitAutograd bits=0x0 slot=-1 alias
key 152 FuncTorchBatchedDecomposition bits=0x0 slot=-1 alias
key 153 CompositeImplicitAutogradNestedTensor bits=0x0 slot=-1 alias
key 154 CompositeExplicitAutograd bits=0x0 slot=-1 alias
key 155 CompositeExplicitAutogradNonFunctional bits=0x0 slot=-1 alias
AnnotatedSchema_schema 0
AnnotatedKernel_inferred_function_schema 40
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
OptionalAliasKind_engaged 1
OptionalAliasKind_payload 0
AliasAnalysisKind_unset 1
name AliasAnalysisKind 0 INTERNAL_SPECIAL_CASE
name AliasAnalysisKind 1 CONSERVATIVE
name AliasAnalysisKind 2 FROM_SCHEMA
name AliasAnalysisKind 3 PURE_FUNCTION
sizeof_Argument 112
Argument_name 0
Argument_real_type 48
Argument_N 64
OptionalInt32_engaged 4
OptionalInt32_payload 0
Argument_default_value 72
OptionalIValue_engaged 16
OptionalIValue_payload 0
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
InternedStrings_from_realSingleton 265352576
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
OptionalQualifiedName_engaged 120
OptionalQualifiedName_payload 0
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
name TypeKind 12 AwaitType
name TypeKind 13 RRefType
name TypeKind 14 IntType
name TypeKind 15 NoneType
name TypeKind 16 StringType
name TypeKind 17 GeneratorType
name TypeKind 18 QuantizerType
name TypeKind 19 BoolType
name TypeKind 20 OptionalType
name TypeKind 21 VarType
name TypeKind 22 DeviceObjType
name TypeKind 23 StreamObjType
name TypeKind 24 FunctionType
name TypeKind 25 ClassType
name TypeKind 26 PyObjectType
name TypeKind 27 CapsuleType
name TypeKind 28 InterfaceType
name TypeKind 29 QSchemeType
name TypeKind 30 ScalarTypeType
name TypeKind 31 LayoutType
name TypeKind 32 MemoryFormatType
name TypeKind 33 AnyListType
name TypeKind 34 AnyTupleType
name TypeKind 35 AnyClassType
name TypeKind 36 SymIntType
name TypeKind 37 SymFloatType
name TypeKind 38 SymBoolType
name TypeKind 39 UnionType
name TypeKind 40 DynamicType
name TypeStr 0 Any
name TypeStr 2 AnyEnumType
name TypeStr 3 Tensor
name TypeStr 4 Storage
name TypeStr 8 Scalar
name TypeStr 9 float
name TypeStr 10 complex
name TypeStr 14 int
name TypeStr 15 NoneType
name TypeStr 16 str
name TypeStr 17 Generator
name TypeStr 18 Quantizer
name TypeStr 19 bool
name TypeStr 22 Device
name TypeStr 23 Stream
name TypeStr 26 PyObject
name TypeStr 27 Capsule
name TypeStr 29 QScheme
name TypeStr 30 ScalarType
name TypeStr 31 Layout
name TypeStr 32 MemoryFormat
name TypeStr 33 list
name TypeStr 34 tuple
name TypeStr 35 AnyClassType
name TypeStr 36 SymInt
name TypeStr 37 SymFloat
name TypeStr 38 SymBool
sizeof_IValue 16
IValue_payload 0
IValue_tag 8
ConstantString_str 16
ListImpl_list 16
name IValueTag 0 None
name IValueTag 1 Tensor
name IValueTag 2 Storage
name IValueTag 3 Double
name IValueTag 4 ComplexDouble
name IValueTag 5 Int
name IValueTag 6 UInt
name IValueTag 7 SymInt
name IValueTag 8 SymFloat
name IValueTag 9 SymBool
name IValueTag 10 Bool
name IValueTag 11 Tuple
name IValueTag 12 String
name IValueTag 13 Blob
name IValueTag 14 GenericList
name IValueTag 15 GenericDict
name IValueTag 16 Future
name IValueTag 17 Await
name IValueTag 18 Device
name IValueTag 19 Stream
name IValueTag 20 Object
name IValueTag 21 PyObject
name IValueTag 22 Uninitialized
name IValueTag 23 Capsule
name IValueTag 24 RRef
name IValueTag 25 Quantizer
name IValueTag 26 Generator
name IValueTag 27 Enum
Libc10Tls_torchDispatchModeState 208
sizeof_TorchDispatchModeTLS 96
TorchDispatchModeTLS_stack 0
TorchDispatchModeTLS_infra_modes 24
count_infra_modes 3
sizeof_SharedPtr 16
sizeof_OptionalModePtr 24
OptionalModePtr_engaged 16
OptionalModePtr_payload 0
SafePyObject_data 0
Libc10Tls_pythonDispatcherState 176
Libc10Tls_autogradState 16
sizeof_AutogradState 32
AutogradState_grad_mode 24
AutogradState_grad_mode_bit 0
AutogradState_inference_mode 24
AutogradState_inference_mode_bit 1
LibtorchCpuTls_functorchTLS 128
FuncTorchTLS_dynamicLayerStack 8
THPVariable_cdata 16
PyObject_ob_type 8
PyTypeObject_tp_name 24
PyTypeObject_tp_base 256
symbol THPVariableClass THPVariableClass
name TorchDispatchModeKey 0 FAKE
name TorchDispatchModeKey 1 PROXY
name TorchDispatchModeKey 2 FUNCTIONAL
sizeof_DynamicLayer 80
digest fnv1a64 0x101c217a28aca926
