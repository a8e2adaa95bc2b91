@problemName Reg
@timeStamps false
@missing false
@univariate true
@equalLength true
@seriesLength 3
@targetLabel true
@classLabel false
@data
1,2,3:0.5
4,5,6:-1.25
