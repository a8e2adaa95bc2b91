@problemName Stamped
@timeStamps true
@missing true
@univariate false
@dimensions 2
@equalLength false
@classLabel true a b
@data
(0.5,1),(1.5,2),(4,3):(0.5,10),(4,30),(7.25,40):b
(2,5):(2,?):a
