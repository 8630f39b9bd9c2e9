dscope-profile 1
runtime c10
version 1.13.0
build-id libtorch_cpu feaefbc559e74298c67a4aca95dd5e2c49a4c739
build-id libc10 d7a83fb67d8787eee6a24d42bd5b9d0dfa9540fa
symbol realSingleton _ZN3c1010Dispatcher13realSingletonEv
symbol tls_dispatch_key_set _ZN3c104impl26raw_local_dispatch_key_setE
symbol fallthrough_kernel _ZN3c1018fallthrough_kernelEPNS_14OperatorKernelERKNS_14OperatorHandleENS_14DispatchKeySetEPSt6vectorINS_6IValueESaIS7_EE
Dispatcher_from_realSingleton 103839248
sizeof_StdString 32
StdList_size 16
StdListNode_data 16
Dispatcher_operators 0
Dispatcher_backendFallbackKernels 176
OperatorDef_op 0
OperatorEntry_name 0
OperatorName_name 0
OperatorName_overload_name 32
OperatorEntry_schema 64
OptionalSchema_payload 8
AnnotatedSchema_debug 120
OperatorEntry_dispatchTable 248
OperatorEntry_kernels 3792
sizeof_KernelFunction 32
KernelFunction_functor 0
KernelFunction_boxed 8
KernelFunction_unboxed 16
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
THPVariable_cdata 24
