#!/usr/bin/env python3
"""Stand-ins for the architectures video inference runs most, with random
weights, for tools/bench and nn-run --check: the shapes, operators and
export patterns of real models (PyTorch's SiLU as Sigmoid * Mul,
BatchNormalization nodes, Clip(0, 6), SE blocks, depthwise 3x3 and 5x5,
LayerNormalization and Erf GELU, ConvTranspose, Resize, Split/Concat), sized
like the originals, so a weakness no model in ../shared shows comes out:

    mobilenetv2  224x224, inverted residuals, Relu6 as Clip
    resnet18     224x224, BatchNormalization kept as nodes
    yolov8n      640x640, C2f blocks, SPPF, SiLU, nearest Resize, 3 heads
    effnet_b0    224x224, depthwise 3x3/5x5, squeeze-excitation, SiLU
    mobilenetv3  224x224 (Large), HardSwish, SE gated by HardSigmoid
    vit_tiny     197 tokens x 192, 6 encoder layers (opset 17)
    unet         256x256, MaxPool down, ConvTranspose up, skip Concats
    deeplabv3    512x512, MobileNetV2 dilated, ASPP, bilinear Resize to 21x512x512
    espcn        224x224 Y plane, x3 pixel shuffle as Reshape/Transpose (672x672)
    style        224x224, reflect Pad, 9x9 convs, InstanceNormalization, Resize
    convnext     224x224 (Tiny), depthwise 7x7, LayerNorm + MLP in NHWC, GELU
    crnn         32x160 text line, VGG convs, two bidirectional LSTMs, Softmax
    arcface      112x112 face, IResNet-18: BatchNorm around convs, PRelu
    u2netp       320x320, nested U-blocks, dilated 3x3 at 16 channels, Resize
    resnet_qop   ResNet-18 in 8 bits, QOperator format (QLinearConv, com.microsoft
                 QLinearAdd / QLinearGlobalAveragePool, QLinearMatMul; the zoo's *-int8)
    mobilenetv2_qop  MobileNetV2 in 8 bits, QOperator format (depthwise QLinearConv)
    mobilenetv2_qdq, resnet_qdq  the two above in the QDQ format (ONNX Runtime's
                 quantizer's default: DequantizeLinear -> Conv -> QuantizeLinear), same integers
    vit_tiny_dyn vit_tiny dynamically quantized (DynamicQuantizeLinear + MatMulInteger,
                 ONNX Runtime's quantize_dynamic: the *_quantized.onnx transformers)

    tools/arch-models.py OUT_DIR [NAME ...]

Each lands in OUT_DIR/NAME as model.onnx and test_data_set_0/input_0.pb
(the layout tools/bench reads); node tools/ort/ort-run.js --make-case turns
one into a case with ONNX Runtime's outputs.  Needs python3-onnx and numpy
(/usr/bin/python3 on Debian).  Random weights: for speed and agreement with
ONNX Runtime, not for accuracy.
"""
import sys, os, numpy as np, onnx
from onnx import helper as h, TensorProto as T, numpy_helper as nh
rng = np.random.default_rng(0)

class G:
    def __init__(s, name):
        s.nodes=[]; s.inits=[]; s.n=0; s.name=name
    def t(s, p='t'):
        s.n+=1; return f'{p}{s.n}'
    def w(s, arr):
        nm=s.t('w'); s.inits.append(nh.from_array(arr.astype(np.float32), nm)); return nm
    def i64(s, arr):
        nm=s.t('c'); s.inits.append(nh.from_array(np.array(arr,dtype=np.int64), nm)); return nm
    def op(s, typ, ins, nout=1, **kw):
        outs=[s.t() for _ in range(nout)]
        s.nodes.append(h.make_node(typ, ins, outs, **kw)); return outs[0] if nout==1 else outs
    def conv(s, x, cin, cout, k, st=1, g=1, bias=True, pad=None, dil=1):
        p = (k//2)*dil if pad is None else pad
        w = s.w(rng.standard_normal((cout, cin//g, k, k))*np.sqrt(2.0/(cin//g*k*k))*0.7)
        ins=[x,w]
        if bias: ins.append(s.w(rng.standard_normal(cout)*0.05))
        return s.op('Conv', ins, kernel_shape=[k,k], strides=[st,st], pads=[p]*4, group=g, dilations=[dil,dil])
    def bn(s, x, c):
        return s.op('BatchNormalization', [x, s.w(1+0.1*rng.standard_normal(c)), s.w(0.1*rng.standard_normal(c)),
                    s.w(0.1*rng.standard_normal(c)), s.w(1+0.1*np.abs(rng.standard_normal(c)))], epsilon=1e-5)
    def relu6(s, x):
        return s.op('Clip', [x, s.w(np.array(0.0)), s.w(np.array(6.0))])
    def silu(s, x):
        return s.op('Mul', [x, s.op('Sigmoid', [x])])
    def save(s, inp, shape, outs, path, opset=13):
        g = h.make_graph(s.nodes, s.name, [h.make_tensor_value_info(inp, T.FLOAT, shape)],
                         [h.make_tensor_value_info(o, T.FLOAT, None) for o in outs], s.inits)
        m = h.make_model(g, opset_imports=[h.make_opsetid('', opset)]); m.ir_version = 8
        os.makedirs(path+'/test_data_set_0', exist_ok=True)
        onnx.save(m, path+'/model.onnx')
        x = rng.standard_normal(shape).astype(np.float32)
        open(path+'/test_data_set_0/input_0.pb','wb').write(nh.from_array(x, inp).SerializeToString())

def mobilenetv2(path):
    g=G('mbv2'); x=g.relu6(g.conv('x',3,32,3,2)); c=32
    for t,co,n,st in [(1,16,1,1),(6,24,2,2),(6,32,3,2),(6,64,4,2),(6,96,3,1),(6,160,3,2),(6,320,1,1)]:
        for i in range(n):
            s_ = st if i==0 else 1; hid=c*t; y=x
            if t!=1: y=g.relu6(g.conv(y,c,hid,1))
            y=g.relu6(g.conv(y,hid,hid,3,s_,g=hid))
            y=g.conv(y,hid,co,1)
            if s_==1 and c==co: y=g.op('Add',[x,y])
            x=y; c=co
    x=g.relu6(g.conv(x,c,1280,1)); x=g.op('GlobalAveragePool',[x]); x=g.op('Flatten',[x])
    x=g.op('Gemm',[x,g.w(rng.standard_normal((1000,1280))*0.03),g.w(np.zeros(1000))],transB=1)
    g.save('x',[1,3,224,224],[x],path)

def resnet18(path):
    g=G('r18'); x=g.op('Relu',[g.bn(g.conv('x',3,64,7,2,bias=False),64)])
    x=g.op('MaxPool',[x],kernel_shape=[3,3],strides=[2,2],pads=[1,1,1,1]); c=64
    for co,st in [(64,1),(64,1),(128,2),(128,1),(256,2),(256,1),(512,2),(512,1)]:
        y=g.op('Relu',[g.bn(g.conv(x,c,co,3,st,bias=False),co)]); y=g.bn(g.conv(y,co,co,3,1,bias=False),co)
        sc=x if (st==1 and c==co) else g.bn(g.conv(x,c,co,1,st,bias=False),co)
        x=g.op('Relu',[g.op('Add',[y,sc])]); c=co
    x=g.op('Flatten',[g.op('GlobalAveragePool',[x])])
    x=g.op('Gemm',[x,g.w(rng.standard_normal((1000,512))*0.03),g.w(np.zeros(1000))],transB=1)
    g.save('x',[1,3,224,224],[x],path)

def yolov8n(path, S=640):
    g=G('y8')
    def cbs(x,ci,co,k=1,s=1): return g.silu(g.conv(x,ci,co,k,s))
    def c2f(x,ci,co,n,short):
        y=cbs(x,ci,co,1); a,b=g.op('Split',[y,g.i64([co//2,co//2])],nout=2,axis=1); outs=[a,b]; cur=b
        for _ in range(n):
            z=cbs(cbs(cur,co//2,co//2,3),co//2,co//2,3)
            cur=g.op('Add',[cur,z]) if short else z; outs.append(cur)
        return cbs(g.op('Concat',outs,axis=1),(2+n)*co//2,co,1)
    x=cbs('x',3,16,3,2); x=cbs(x,16,32,3,2); x=c2f(x,32,32,1,True)
    x=cbs(x,32,64,3,2); p3=c2f(x,64,64,2,True)
    x=cbs(p3,64,128,3,2); p4=c2f(x,128,128,2,True)
    x=cbs(p4,128,256,3,2); x=c2f(x,256,256,1,True)
    y=cbs(x,256,128,1); m1=g.op('MaxPool',[y],kernel_shape=[5,5],pads=[2]*4); m2=g.op('MaxPool',[m1],kernel_shape=[5,5],pads=[2]*4)
    m3=g.op('MaxPool',[m2],kernel_shape=[5,5],pads=[2]*4); p5=cbs(g.op('Concat',[y,m1,m2,m3],axis=1),512,256,1)
    sc=g.w(np.array([1,1,2,2]))
    u=g.op('Resize',[p5,'',sc],mode='nearest'); h4=c2f(g.op('Concat',[u,p4],axis=1),384,128,1,False)
    u=g.op('Resize',[h4,'',sc],mode='nearest'); h3=c2f(g.op('Concat',[u,p3],axis=1),192,64,1,False)
    d=cbs(h3,64,64,3,2); h4b=c2f(g.op('Concat',[d,h4],axis=1),192,128,1,False)
    d=cbs(h4b,128,128,3,2); h5=c2f(g.op('Concat',[d,p5],axis=1),384,256,1,False)
    outs=[]
    for f,c in [(h3,64),(h4b,128),(h5,256)]:
        bx=g.conv(cbs(cbs(f,c,64,3),64,64,3),64,64,1); cl=g.conv(cbs(cbs(f,c,80,3),80,80,3),80,80,1)
        o=g.op('Concat',[bx,cl],axis=1); outs.append(g.op('Reshape',[o,g.i64([1,144,-1])]))
    out=g.op('Concat',outs,axis=2)
    g.save('x',[1,3,S,S],[out],path)

def effnet_b0(path):
    g=G('eb0'); x=g.silu(g.conv('x',3,32,3,2)); c=32
    for t,k,st,co,n in [(1,3,1,16,1),(6,3,2,24,2),(6,5,2,40,2),(6,3,2,80,3),(6,5,1,112,3),(6,5,2,192,4),(6,3,1,320,1)]:
        for i in range(n):
            s_=st if i==0 else 1; hid=c*t; y=x
            if t!=1: y=g.silu(g.conv(y,c,hid,1))
            y=g.silu(g.conv(y,hid,hid,k,s_,g=hid))
            se=max(1,c//4); z=g.op('GlobalAveragePool',[y]); z=g.silu(g.conv(z,hid,se,1)); z=g.op('Sigmoid',[g.conv(z,se,hid,1)])
            y=g.op('Mul',[y,z]); y=g.conv(y,hid,co,1)
            if s_==1 and c==co: y=g.op('Add',[x,y])
            x=y; c=co
    x=g.silu(g.conv(x,c,1280,1)); x=g.op('Flatten',[g.op('GlobalAveragePool',[x])])
    x=g.op('Gemm',[x,g.w(rng.standard_normal((1000,1280))*0.03),g.w(np.zeros(1000))],transB=1)
    g.save('x',[1,3,224,224],[x],path)

def mobilenetv3(path):
    """MobileNetV3-Large as torchvision exports it: HardSwish, SE blocks
    whose gate is HardSigmoid (alpha 1/6), BatchNorm folded into the convs."""
    g=G('mbv3')
    def act(x, hs): return g.op('HardSwish',[x]) if hs else g.op('Relu',[x])
    def div8(v): return max(8, int(v + 4) // 8 * 8)
    x=act(g.conv('x',3,16,3,2),True); c=16
    for k,e,co,se,hs,st in [(3,16,16,0,0,1),(3,64,24,0,0,2),(3,72,24,0,0,1),(5,72,40,1,0,2),(5,120,40,1,0,1),
                            (5,120,40,1,0,1),(3,240,80,0,1,2),(3,200,80,0,1,1),(3,184,80,0,1,1),(3,184,80,0,1,1),
                            (3,480,112,1,1,1),(3,672,112,1,1,1),(5,672,160,1,1,2),(5,960,160,1,1,1),(5,960,160,1,1,1)]:
        y=x
        if e!=c: y=act(g.conv(y,c,e,1),hs)
        y=act(g.conv(y,e,e,k,st,g=e),hs)
        if se:
            sq=div8(e/4); z=g.op('GlobalAveragePool',[y]); z=g.op('Relu',[g.conv(z,e,sq,1)])
            z=g.op('HardSigmoid',[g.conv(z,sq,e,1)],alpha=1.0/6,beta=0.5); y=g.op('Mul',[y,z])
        y=g.conv(y,e,co,1)
        if st==1 and c==co: y=g.op('Add',[x,y])
        x=y; c=co
    x=act(g.conv(x,c,960,1),True); x=g.op('Flatten',[g.op('GlobalAveragePool',[x])])
    x=g.op('HardSwish',[g.op('Gemm',[x,g.w(rng.standard_normal((1280,960))*0.03),g.w(np.zeros(1280))],transB=1)])
    x=g.op('Gemm',[x,g.w(rng.standard_normal((1000,1280))*0.03),g.w(np.zeros(1000))],transB=1)
    g.save('x',[1,3,224,224],[x],path,opset=14)

def vit_tiny(path, L=6, D=192, N=197, heads=3, dyn=False):
    """dyn: the linear layers as ONNX Runtime's quantize_dynamic writes them
    (transformer models shipped as *_quantized.onnx): DynamicQuantizeLinear
    of the activations, MatMulInteger against int8 weights (one scale, zero
    point 0), Cast to float, Mul by the product of the two scales."""
    g=G('vit'); x='x'; dh=D//heads
    def ln(x):
        return g.op('LayerNormalization',[x,g.w(1+0.1*rng.standard_normal(D)),g.w(0.1*rng.standard_normal(D))],axis=-1,epsilon=1e-6)
    def mm(x,wf):
        if not dyn: return g.op('MatMul',[x,g.w(wf)])
        ws=np.float32(np.abs(wf).max()/127.0)
        wq=g.t('c'); g.inits.append(nh.from_array(np.clip(np.round(wf/ws),-127,127).astype(np.int8),wq))
        wz=g.t('c'); g.inits.append(nh.from_array(np.array(0,np.int8),wz))
        xq,xs,xz=g.op('DynamicQuantizeLinear',[x],nout=3)
        y=g.op('Cast',[g.op('MatMulInteger',[xq,wq,xz,wz])],to=T.FLOAT)
        return g.op('Mul',[y,g.op('Mul',[xs,g.w(np.array(ws))])])
    def lin(x,i,o): return g.op('Add',[mm(x,rng.standard_normal((i,o))/np.sqrt(i)),g.w(0.02*rng.standard_normal(o))])
    def gelu(x):
        e=g.op('Erf',[g.op('Div',[x,g.w(np.array(1.4142135))])]); return g.op('Mul',[g.op('Mul',[x,g.op('Add',[e,g.w(np.array(1.0))])]),g.w(np.array(0.5))])
    for l in range(L):
        y=ln(x); qkv=lin(y,D,3*D); qkv=g.op('Reshape',[qkv,g.i64([1,N,3,heads,dh])]); qkv=g.op('Transpose',[qkv],perm=[2,0,3,1,4])
        q,k,v=[g.op('Squeeze',[s_,g.i64([0])]) for s_ in g.op('Split',[qkv,g.i64([1,1,1])],nout=3,axis=0)]
        a=g.op('Softmax',[g.op('Mul',[g.op('MatMul',[q,g.op('Transpose',[k],perm=[0,1,3,2])]),g.w(np.array(dh**-0.5))])],axis=-1)
        o=g.op('Reshape',[g.op('Transpose',[g.op('MatMul',[a,v])],perm=[0,2,1,3]),g.i64([1,N,D])])
        x=g.op('Add',[x,lin(o,D,D)])
        x=g.op('Add',[x,lin(gelu(lin(ln(x),D,4*D)),4*D,D)])
    g.save('x',[1,N,D],[ln(x)],path,opset=17)

def unet(path, S=256):
    g=G('unet'); x='x'; c=3; skips=[]
    def blk(x,ci,co): return g.op('Relu',[g.conv(g.op('Relu',[g.conv(x,ci,co,3)]),co,co,3)])
    for co in [16,32,64,128]:
        x=blk(x,c,co); skips.append((x,co)); x=g.op('MaxPool',[x],kernel_shape=[2,2],strides=[2,2]); c=co
    x=blk(x,c,256); c=256
    for (sk,co) in reversed(skips):
        w=g.w(rng.standard_normal((c,co,2,2))*np.sqrt(1.0/c)); x=g.op('ConvTranspose',[x,w,g.w(np.zeros(co))],kernel_shape=[2,2],strides=[2,2])
        x=blk(g.op('Concat',[x,sk],axis=1),2*co,co); c=co
    x=g.op('Sigmoid',[g.conv(x,c,1,1)])
    g.save('x',[1,3,S,S],[x],path)

def deeplabv3(path, S=512):
    """DeepLabV3 on a MobileNetV2 backbone at output stride 16 (the last
    stages dilated by 2), ASPP at rates 6/12/18 with an image-pooling branch,
    bilinear Resize of 21 class maps back to the input size."""
    g=G('dlv3'); x=g.relu6(g.conv('x',3,32,3,2)); c=32; dil=1
    for t,co,n,st in [(1,16,1,1),(6,24,2,2),(6,32,3,2),(6,64,4,2),(6,96,3,1),(6,160,3,2),(6,320,1,1)]:
        if co >= 160 and st == 2: st=1; dil=2
        for i in range(n):
            s_ = st if i==0 else 1; hid=c*t; y=x
            if t!=1: y=g.relu6(g.conv(y,c,hid,1))
            y=g.relu6(g.conv(y,hid,hid,3,s_,g=hid,dil=dil))
            y=g.conv(y,hid,co,1)
            if s_==1 and c==co: y=g.op('Add',[x,y])
            x=y; c=co
    br=[g.op('Relu',[g.conv(x,c,256,1)])]
    for r in (6,12,18): br.append(g.op('Relu',[g.conv(x,c,256,3,dil=r)]))
    p=g.op('Relu',[g.conv(g.op('GlobalAveragePool',[x]),c,256,1)])
    br.append(g.op('Resize',[p,'','',g.i64([1,256,S//16,S//16])],mode='linear'))
    y=g.op('Relu',[g.conv(g.op('Concat',br,axis=1),1280,256,1)])
    y=g.conv(g.op('Relu',[g.conv(y,256,256,3)]),256,21,1)
    y=g.op('Resize',[y,'','',g.i64([1,21,S,S])],mode='linear')
    g.save('x',[1,3,S,S],[y],path)

def espcn(path, S=224, r=3):
    """Sub-pixel super-resolution as the ONNX model zoo's super-resolution-10
    exports it: three convs on the Y plane, then the pixel shuffle as
    Reshape, a 6-D Transpose and Reshape (x3: 224 -> 672)."""
    g=G('espcn'); x=g.op('Relu',[g.conv('x',1,64,5)]); x=g.op('Relu',[g.conv(x,64,64,3)])
    x=g.op('Relu',[g.conv(x,64,32,3)]); x=g.conv(x,32,r*r,3)
    x=g.op('Reshape',[x,g.i64([1,1,r,r,S,S])]); x=g.op('Transpose',[x],perm=[0,1,4,2,5,3])
    x=g.op('Reshape',[x,g.i64([1,1,S*r,S*r])])
    g.save('x',[1,1,S,S],[x],path)

def style(path, S=224):
    """Fast neural style transfer (the model zoo's mosaic/candy): reflect
    Pads, 9x9 convs, InstanceNormalization after every conv, five residual
    blocks, nearest Resize up."""
    g=G('style')
    def inorm(x,c): return g.op('InstanceNormalization',[x,g.w(1+0.1*rng.standard_normal(c)),g.w(0.1*rng.standard_normal(c))],epsilon=1e-5)
    def pc(x,ci,co,k,st=1):
        x=g.op('Pad',[x,g.i64([0,0,k//2,k//2,0,0,k//2,k//2])],mode='reflect'); return g.conv(x,ci,co,k,st,pad=0)
    x=g.op('Relu',[inorm(pc('x',3,32,9),32)]); x=g.op('Relu',[inorm(pc(x,32,64,3,2),64)])
    x=g.op('Relu',[inorm(pc(x,64,128,3,2),128)])
    for _ in range(5):
        y=g.op('Relu',[inorm(pc(x,128,128,3),128)]); x=g.op('Add',[x,inorm(pc(y,128,128,3),128)])
    sc=g.w(np.array([1,1,2,2]))
    x=g.op('Relu',[inorm(pc(g.op('Resize',[x,'',sc],mode='nearest'),128,64,3),64)])
    x=g.op('Relu',[inorm(pc(g.op('Resize',[x,'',sc],mode='nearest'),64,32,3),32)])
    g.save('x',[1,3,S,S],[pc(x,32,3,9)],path)

def convnext(path, depths=(3, 3, 9, 3), dims=(96, 192, 384, 768)):
    """ConvNeXt-Tiny as torch exports it at opset 17: depthwise 7x7, the
    block's LayerNorm and MLP in NHWC between two Transposes (Erf GELU,
    layer scale), the stem's and downsamplers' LayerNorm over channels in
    NCHW written out (ReduceMean, Sub, Pow, Sqrt, Div)."""
    g=G('convnext')
    def ln_cf(x,c):
        u=g.op('ReduceMean',[x],axes=[1]); d=g.op('Sub',[x,u])
        v=g.op('ReduceMean',[g.op('Pow',[d,g.w(np.array(2.0))])],axes=[1])
        y=g.op('Div',[d,g.op('Sqrt',[g.op('Add',[v,g.w(np.array(1e-6))])])])
        return g.op('Add',[g.op('Mul',[y,g.w((1+0.1*rng.standard_normal((c,1,1))))]),g.w(0.1*rng.standard_normal((c,1,1)))])
    def gelu(x):
        e=g.op('Erf',[g.op('Div',[x,g.w(np.array(1.4142135))])]); return g.op('Mul',[g.op('Mul',[x,g.op('Add',[e,g.w(np.array(1.0))])]),g.w(np.array(0.5))])
    x=ln_cf(g.conv('x',3,dims[0],4,4,pad=0),dims[0]); c=dims[0]
    for i,(dp,dm) in enumerate(zip(depths,dims)):
        if i: x=g.conv(ln_cf(x,c),c,dm,2,2,pad=0); c=dm
        for _ in range(dp):
            y=g.conv(x,c,c,7,g=c); y=g.op('Transpose',[y],perm=[0,2,3,1])
            y=g.op('LayerNormalization',[y,g.w(1+0.1*rng.standard_normal(c)),g.w(0.1*rng.standard_normal(c))],axis=-1,epsilon=1e-6)
            y=g.op('Add',[g.op('MatMul',[y,g.w(rng.standard_normal((c,4*c))/np.sqrt(c))]),g.w(0.02*rng.standard_normal(4*c))])
            y=g.op('Add',[g.op('MatMul',[gelu(y),g.w(rng.standard_normal((4*c,c))/np.sqrt(4*c))]),g.w(0.02*rng.standard_normal(c))])
            y=g.op('Mul',[y,g.w(0.1+0.01*rng.standard_normal(c))])
            x=g.op('Add',[x,g.op('Transpose',[y],perm=[0,3,1,2])])
    x=g.op('ReduceMean',[x],axes=[2,3],keepdims=0)
    x=g.op('LayerNormalization',[x,g.w(1+0.1*rng.standard_normal(c)),g.w(0.1*rng.standard_normal(c))],axis=-1,epsilon=1e-6)
    x=g.op('Gemm',[x,g.w(rng.standard_normal((1000,c))*0.03),g.w(np.zeros(1000))],transB=1)
    g.save('x',[1,3,224,224],[x],path,opset=17)

def crnn(path, W=160, classes=6625):
    """A CRNN text recognizer: VGG-style convs with BatchNormalization to
    a 1-pixel-high feature row, two bidirectional LSTMs (hidden 256) over
    its 40 columns, a per-column classifier, Softmax."""
    g=G('crnn'); x='x'; c=3
    def cbr(x,ci,co): return g.op('Relu',[g.bn(g.conv(x,ci,co,3,bias=False),co)])
    for co,pool in [(64,(2,2)),(128,(2,2)),(256,None),(256,(2,1)),(512,None),(512,(2,1))]:
        x=cbr(x,c,co); c=co
        if pool: x=g.op('MaxPool',[x],kernel_shape=list(pool),strides=list(pool))
    x=g.op('Relu',[g.bn(g.conv(x,512,512,2,pad=0,bias=False),512)])   # 2x2 valid: height 2 -> 1
    x=g.op('Transpose',[g.op('Squeeze',[x,g.i64([2])])],perm=[2,0,1])    # [T, 1, 512]
    T_=W//4-1; hd=256
    for i in range(2):
        D=512 if i==0 else 2*hd
        Wt=g.w(rng.standard_normal((2,4*hd,D))/np.sqrt(D)); R=g.w(rng.standard_normal((2,4*hd,hd))/np.sqrt(hd))
        B=g.w(0.02*rng.standard_normal((2,8*hd)))
        y=g.op('LSTM',[x,Wt,R,B],direction='bidirectional',hidden_size=hd)      # [T, 2, 1, hd]
        x=g.op('Reshape',[g.op('Transpose',[y],perm=[0,2,1,3]),g.i64([T_,1,2*hd])])
    x=g.op('Add',[g.op('MatMul',[x,g.w(rng.standard_normal((2*hd,classes))/np.sqrt(2*hd))]),g.w(np.zeros(classes))])
    g.save('x',[1,3,32,W],[g.op('Softmax',[x],axis=-1)],path)

def arcface(path, units=(2, 2, 2, 2)):
    """ArcFace's IResNet (insightface), 18 layers: 112x112 faces,
    BatchNormalization nodes around each conv, PRelu, a 512-d embedding
    through a Gemm and a BatchNormalization."""
    g=G('arcface'); c=64
    def prelu(x,c): return g.op('PRelu',[x,g.w(0.25+0.01*rng.standard_normal((c,1,1)))])
    x=prelu(g.bn(g.conv('x',3,64,3,bias=False),64),64)
    for co,n in zip((64,128,256,512),units):
        for i in range(n):
            st=2 if i==0 else 1
            y=g.bn(x,c); y=g.conv(y,c,co,3,bias=False); y=prelu(g.bn(y,co),co); y=g.bn(g.conv(y,co,co,3,st,bias=False),co)
            sc=x if (st==1 and c==co) else g.bn(g.conv(x,c,co,1,st,bias=False,pad=0),co)
            x=g.op('Add',[y,sc]); c=co
    x=g.op('Flatten',[g.bn(x,512)])
    x=g.op('Gemm',[x,g.w(rng.standard_normal((512,512*7*7))*0.005),g.w(np.zeros(512))],transB=1)
    x=g.op('BatchNormalization',[g.op('Unsqueeze',[g.op('Unsqueeze',[x,g.i64([2])]),g.i64([3])]),g.w(np.ones(512)),g.w(np.zeros(512)),g.w(np.zeros(512)),g.w(np.ones(512))],epsilon=1e-5)
    g.save('x',[1,3,112,112],[g.op('Flatten',[x])],path)

def u2netp(path, S=320):
    """U2-Net-lite (u2netp, rembg's small background remover): nested
    U-blocks (RSU) of 3x3 convs at 16 channels, dilated 2/4/8 at their
    bottoms, MaxPool ceil_mode, bilinear Resize back up and Concats, six side
    outputs fused into a Sigmoid mask at 320x320."""
    g=G('u2netp')
    def cr(x,ci,co,d=1): return g.op('Relu',[g.conv(x,ci,co,3,dil=d)])
    def pool(x): return g.op('MaxPool',[x],kernel_shape=[2,2],strides=[2,2],ceil_mode=1)
    def up(x,c,s): return g.op('Resize',[x,'','',g.i64([1,c,s,s])],mode='linear')
    def rsu(x,ci,mid,co,L,s):
        hin=cr(x,ci,co); h=cr(hin,co,mid); st=[(h,s)]; sz=s
        for _ in range(L-2):
            sz=(sz+1)//2; h=cr(pool(h),mid,mid); st.append((h,sz))
        d=cr(g.op('Concat',[cr(h,mid,mid,2),st[-1][0]],axis=1),2*mid,mid)
        for i in range(len(st)-2,-1,-1):
            d=cr(g.op('Concat',[up(d,mid,st[i][1]),st[i][0]],axis=1),2*mid,mid if i else co)
        return g.op('Add',[d,hin])
    def rsu4f(x,ci,mid,co):
        hin=cr(x,ci,co); h1=cr(hin,co,mid); h2=cr(h1,mid,mid,2); h3=cr(h2,mid,mid,4); h4=cr(h3,mid,mid,8)
        d=cr(g.op('Concat',[h4,h3],axis=1),2*mid,mid,4); d=cr(g.op('Concat',[d,h2],axis=1),2*mid,mid,2)
        return g.op('Add',[cr(g.op('Concat',[d,h1],axis=1),2*mid,co),hin])
    s=[S//2**i for i in range(6)]
    h1=rsu('x',3,16,64,7,s[0]); h2=rsu(pool(h1),64,16,64,6,s[1]); h3=rsu(pool(h2),64,16,64,5,s[2])
    h4=rsu(pool(h3),64,16,64,4,s[3]); h5=rsu4f(pool(h4),64,16,64); h6=rsu4f(pool(h5),64,16,64)
    d5=rsu4f(g.op('Concat',[up(h6,64,s[4]),h5],axis=1),128,16,64)
    d4=rsu(g.op('Concat',[up(d5,64,s[3]),h4],axis=1),128,16,64,4,s[3])
    d3=rsu(g.op('Concat',[up(d4,64,s[2]),h3],axis=1),128,16,64,5,s[2])
    d2=rsu(g.op('Concat',[up(d3,64,s[1]),h2],axis=1),128,16,64,6,s[1])
    d1=rsu(g.op('Concat',[up(d2,64,s[0]),h1],axis=1),128,16,64,7,s[0])
    sides=[g.conv(d1,64,1,3)]+[up(g.conv(f,64,1,3),1,S) for f in (d2,d3,d4,d5,h6)]
    g.save('x',[1,3,S,S],[g.op('Sigmoid',[g.conv(g.op('Concat',sides,axis=1),6,1,1)])],path)

class QOp:
    """Builds 8-bit graphs from a float run of the same network in numpy,
    each activation's (scale, zero point) the quantizer's MinMax over that
    run, 0 exact, in one of ONNX Runtime's quantizer's two formats:
    QOperator (qdq False: QLinearConv with uint8 activations and int8
    weights per output channel, com.microsoft QLinearAdd, ...) or QDQ (qdq
    True: float Conv / Add / GlobalAveragePool / MatMul between
    DequantizeLinear and QuantizeLinear, weights and int32 biases behind
    DequantizeLinear, Relu and Relu6 dropped where the output's range
    covers them, as the quantizer writes it).  Both formats of one network
    and seed carry the same integers: run as ONNX Runtime runs QDQ (the
    groups fused into the QOperator kernels) they give the same bytes."""
    def __init__(s, g, nrng, qdq=False):
        s.g, s.nrng, s.qdq = g, nrng, qdq

    def dq(s, x):                  # a quantized tensor as a QDQ consumer reads it
        return s.g.op('DequantizeLinear', [x[0], *s.qp(x[2])])

    def q(s, yf_name, ys):
        return s.g.op('QuantizeLinear', [yf_name, *s.qp(ys)])

    @staticmethod
    def conv_f(x, w, b, st, p, group=1):   # float Conv (NCHW, batch 1) through im2col
        _, c, hh, ww = x.shape
        co, cg, k, _ = w.shape
        xp = np.pad(x, ((0, 0), (0, 0), (p, p), (p, p)))
        oh, ow = (hh + 2 * p - k) // st + 1, (ww + 2 * p - k) // st + 1
        cols = np.empty((c, k, k, oh, ow), np.float32)
        for i in range(k):
            for j in range(k):
                cols[:, i, j] = xp[0, :, i:i + st * oh:st, j:j + st * ow:st]
        if group == 1:
            y = w.reshape(co, -1) @ cols.reshape(-1, oh * ow)
        else:
            mg = co // group
            cols = cols.reshape(group, cg * k * k, oh * ow)
            y = np.concatenate([w[gi * mg:(gi + 1) * mg].reshape(mg, -1) @ cols[gi] for gi in range(group)])
        return (y + b[:, None]).reshape(1, co, oh, ow)

    @staticmethod
    def aparams(v, relu):          # uint8 activation: MinMax over the calibration run, 0 exact
        lo, hi = (0.0, float(v.max())) if relu else (min(0.0, float(v.min())), max(0.0, float(v.max())))
        sc = max(hi - lo, 1e-6) / 255.0
        return np.float32(sc), int(np.clip(np.round(-lo / sc), 0, 255))

    def init(s, arr, dt):
        nm = s.g.t('c'); s.g.inits.append(nh.from_array(np.asarray(arr, dtype=dt), nm)); return nm

    def qp(s, q):                  # (scale, zero point) -> the two initializers
        return [s.init(q[0], np.float32), s.init(q[1], np.uint8)]

    def conv(s, x, cin, cout, k, st, relu, group=1, relu6=False):
        """x: (name, float calibration activations, (scale, zp)); Relu (or
        Relu6) folded into the output's range, as the quantizer does."""
        xq, xf, xs = x
        cg = cin // group
        wf = (s.nrng.standard_normal((cout, cg, k, k)) * np.sqrt(2.0 / (cg * k * k))).astype(np.float32)
        bf = (s.nrng.standard_normal(cout) * 0.05).astype(np.float32)
        yf = s.conv_f(xf, wf, bf, st, k // 2, group)
        if relu:
            yf = np.clip(yf, 0, 6) if relu6 else np.maximum(yf, 0)
        ws = (np.abs(wf).reshape(cout, -1).max(1) / 127.0).astype(np.float32)
        wq = np.clip(np.round(wf / ws[:, None, None, None]), -127, 127)
        bq = np.round(bf / (xs[0] * ws))
        ys = s.aparams(yf, relu)
        if s.qdq:
            w = s.g.op('DequantizeLinear', [s.init(wq, np.int8), s.init(ws, np.float32),
                                            s.init(np.zeros(cout), np.int8)], axis=0)
            b = s.g.op('DequantizeLinear', [s.init(bq, np.int32), s.init(xs[0] * ws, np.float32),
                                            s.init(np.zeros(cout), np.int32)], axis=0)
            y = s.g.op('Conv', [s.dq(x), w, b], kernel_shape=[k, k], strides=[st, st],
                       pads=[k // 2] * 4, group=group)
            return s.q(y, ys), yf, ys
        y = s.g.op('QLinearConv', [xq, *s.qp(xs), s.init(wq, np.int8), s.init(ws, np.float32),
                                   s.init(np.zeros(cout), np.int8), *s.qp(ys), s.init(bq, np.int32)],
                   kernel_shape=[k, k], strides=[st, st], pads=[k // 2] * 4, group=group)
        return y, yf, ys

    def add(s, a, b, relu):
        of = a[1] + b[1]
        if relu:
            of = np.maximum(of, 0)
        os_ = s.aparams(of, relu)
        if s.qdq:
            return s.q(s.g.op('Add', [s.dq(a), s.dq(b)]), os_), of, os_
        return (s.g.op('QLinearAdd', [a[0], *s.qp(a[2]), b[0], *s.qp(b[2]), *s.qp(os_)],
                       domain='com.microsoft'), of, os_)

    def head(s, x, c, S, path):
        """QLinearGlobalAveragePool, Flatten, a QLinearMatMul to 1000
        classes, DequantizeLinear; saves the model (outputs: the float
        logits and the uint8 ones) and a random input."""
        g = s.g
        pf = x[1].mean(axis=(2, 3), keepdims=True)
        ps = s.aparams(pf, True)
        if s.qdq:
            p = s.q(g.op('Flatten', [s.dq((s.q(g.op('GlobalAveragePool', [s.dq(x)]), ps), 0, ps))]), ps)
        else:
            p = g.op('QLinearGlobalAveragePool', [x[0], *s.qp(x[2]), *s.qp(ps)], domain='com.microsoft',
                     channels_last=0)
            p = g.op('Flatten', [p])
        wf = (s.nrng.standard_normal((c, 1000)) * 0.03).astype(np.float32)
        lf = pf.reshape(1, c) @ wf
        wsc = np.float32(np.abs(wf).max() / 127.0)
        ls = s.aparams(lf, False)
        wq = s.init(np.clip(np.round(wf / wsc), -127, 127), np.int8)
        if s.qdq:
            wd = g.op('DequantizeLinear', [wq, s.init(wsc, np.float32), s.init(0, np.int8)])
            lq = s.q(g.op('MatMul', [s.dq((p, 0, ps)), wd]), ls)
        else:
            lq = g.op('QLinearMatMul', [p, *s.qp(ps), wq, s.init(wsc, np.float32), s.init(0, np.int8), *s.qp(ls)])
        logits = g.op('DequantizeLinear', [lq, *s.qp(ls)])
        gr = h.make_graph(g.nodes, g.name, [h.make_tensor_value_info('x', T.FLOAT, [1, 3, S, S])],
                          [h.make_tensor_value_info(logits, T.FLOAT, [1, 1000]),
                           h.make_tensor_value_info(lq, T.UINT8, [1, 1000])], g.inits)
        m = h.make_model(gr, opset_imports=[h.make_opsetid('', 13), h.make_opsetid('com.microsoft', 1)])
        m.ir_version = 8
        os.makedirs(path + '/test_data_set_0', exist_ok=True)
        onnx.save(m, path + '/model.onnx')
        xin = s.nrng.standard_normal((1, 3, S, S)).astype(np.float32)
        open(path + '/test_data_set_0/input_0.pb', 'wb').write(nh.from_array(xin, 'x').SerializeToString())

    def input(s, S):
        calib = s.nrng.standard_normal((1, 3, S, S)).astype(np.float32)
        xs = s.aparams(calib, False)
        return (s.g.op('QuantizeLinear', ['x', *s.qp(xs)]), calib, xs)


def resnet_qop(path, S=224, qdq=False):
    """ResNet-18 quantized to 8 bits in ONNX Runtime's QOperator format (the
    model zoo's *-int8 models): QuantizeLinear at the input, QLinearConv
    (uint8 activations, int8 weights per output channel, int32 bias; each
    Relu folded into its output's zero point 0), MaxPool on uint8, the
    residuals as com.microsoft QLinearAdd (Relu folded the same way),
    QLinearGlobalAveragePool, Flatten, a QLinearMatMul head and
    DequantizeLinear.  Calibrated as the quantizer's MinMax does, on a
    float run of the same network (numpy) over one random image.  Outputs:
    the float logits and the uint8 ones before DequantizeLinear."""
    q = QOp(G('rqop'), np.random.default_rng(7), qdq)

    def maxpool_f(x):             # 3x3 stride 2, pads 1
        xp = np.pad(x, ((0, 0), (0, 0), (1, 1), (1, 1)), constant_values=-np.inf)
        oh, ow = (x.shape[2] - 1) // 2 + 1, (x.shape[3] - 1) // 2 + 1
        return np.max([xp[:, :, i:i + 2 * oh:2, j:j + 2 * ow:2] for i in range(3) for j in range(3)], axis=0)

    x = q.conv(q.input(S), 3, 64, 7, 2, True)
    mp = dict(kernel_shape=[3, 3], strides=[2, 2], pads=[1, 1, 1, 1])
    x = ((q.q(q.g.op('MaxPool', [q.dq(x)], **mp), x[2]) if qdq else q.g.op('MaxPool', [x[0]], **mp)),
         maxpool_f(x[1]), x[2])
    c = 64
    for co, st in [(64, 1), (64, 1), (128, 2), (128, 1), (256, 2), (256, 1), (512, 2), (512, 1)]:
        y = q.conv(q.conv(x, c, co, 3, st, True), co, co, 3, 1, False)
        sc = x if (st == 1 and c == co) else q.conv(x, c, co, 1, st, False)
        x = q.add(y, sc, True)
        c = co
    q.head(x, c, S, path)


def mobilenetv2_qop(path, S=224, qdq=False):
    """MobileNetV2 quantized to 8 bits in the QOperator format (the zoo's
    mobilenetv2-12-int8): QLinearConv throughout, the depthwise 3x3 ones
    with group = channels, Relu6 folded into the output ranges, the
    residuals as QLinearAdd, the same head as resnet_qop."""
    q = QOp(G('mqop'), np.random.default_rng(11), qdq)
    x = q.conv(q.input(S), 3, 32, 3, 2, True, relu6=True)
    c = 32
    for t, co, n, st in [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1),
                         (6, 160, 3, 2), (6, 320, 1, 1)]:
        for i in range(n):
            s_ = st if i == 0 else 1
            hid, y = c * t, x
            if t != 1:
                y = q.conv(y, c, hid, 1, 1, True, relu6=True)
            y = q.conv(y, hid, hid, 3, s_, True, group=hid, relu6=True)
            y = q.conv(y, hid, co, 1, 1, False)
            if s_ == 1 and c == co:
                y = q.add(x, y, False)
            x, c = y, co
    x = q.conv(x, c, 1280, 1, 1, True, relu6=True)
    q.head(x, 1280, S, path)


def vit_tiny_dyn(path):
    """vit_tiny's linear layers dynamically quantized to 8 bits."""
    vit_tiny(path, dyn=True)


def resnet_qdq(path):
    """resnet_qop in the QDQ format: the same integers."""
    resnet_qop(path, qdq=True)


def mobilenetv2_qdq(path):
    """mobilenetv2_qop in the QDQ format: the same integers."""
    mobilenetv2_qop(path, qdq=True)

ARCHS = [('mobilenetv2', mobilenetv2), ('resnet18', resnet18), ('yolov8n', yolov8n),
         ('effnet_b0', effnet_b0), ('mobilenetv3', mobilenetv3), ('vit_tiny', vit_tiny),
         ('unet', unet), ('deeplabv3', deeplabv3), ('espcn', espcn), ('style', style),
         ('convnext', convnext), ('crnn', crnn), ('arcface', arcface), ('u2netp', u2netp),
         ('mobilenetv2_qdq', mobilenetv2_qdq), ('resnet_qop', resnet_qop),
         ('mobilenetv2_qop', mobilenetv2_qop), ('resnet_qdq', resnet_qdq), ('vit_tiny_dyn', vit_tiny_dyn)]

if __name__ == '__main__':
    if len(sys.argv) < 2 or sys.argv[1].startswith('-'):
        sys.exit(__doc__)
    out, names = sys.argv[1], sys.argv[2:]
    unknown = [n for n in names if n not in dict(ARCHS)]
    if unknown:
        sys.exit('unknown model(s): %s (have: %s)' % (', '.join(unknown), ', '.join(n for n, _ in ARCHS)))
    for name, f in ARCHS:
        if not names or name in names:
            f(os.path.join(out, name))
            print('made', os.path.join(out, name))
